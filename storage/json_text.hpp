// Record values as JSON text, for every JSON writer of the programs (PUBLISH
// payloads, the live page's /events, xqry -j). A STRING holds any bytes, but
// JSON text is UTF-8: nlohmann's dump() throws on an invalid byte, and a hand-made
// writer would pass it on to a parser that refuses it.
#pragma once

#include <string>
#include <string_view>

namespace storage {

// The text a JSON writer gives the bytes of a STRING (or of any text from
// outside): the bytes as they are where they are well-formed UTF-8, and each
// maximal ill-formed subsequence (a byte that starts no character, or a
// character cut short; Unicode's "maximal subpart") one U+FFFD. So "\xff\xfe"
// is two U+FFFD and "\xe2\x82A" one U+FFFD then "A", as nlohmann's
// error_handler_t::replace, Python's errors="replace" and browsers decode them.
std::string jsonText(std::string_view bytes);

// Appends `bytes` as a JSON string: quoted, jsonText's text, `"` and `\`
// escaped, \n \r \t as such and the other control characters as \u00xx.
void appendJsonString(std::string& out, std::string_view bytes);

// A FLOAT or DOUBLE that JSON has no number for: "NaN", "Infinity" or
// "-Infinity" (written as JSON strings, so that NULL alone is null); nullptr
// for a finite value.
const char* nonFiniteName(double v);

}  // namespace storage
