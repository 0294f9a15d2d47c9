// The live page's record JSON (live_page.hpp): apart from the server, so the
// JSON writers' fuzz target (fuzz/fuzz_json.cpp) builds it without httplib.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "storage/json_text.hpp"
#include "tools/live_page.hpp"

namespace tools {

namespace {

using Json = nlohmann::json;

// A value's text as a JSON number for plotting: integers stay exact, a
// RATIONAL "p/q" becomes p/q; anything else (a STRING, a pair, an array, nan)
// is null, and the text field keeps it.
Json numberOf(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long i = strtoll(s, &end, 10);
  if (end != s && *end == 0 && errno == 0) return i;
  if (end != s && *end == '/' && errno == 0) {
    const char* d = end + 1;
    const long long q = strtoll(d, &end, 10);
    if (end != d && *end == 0 && q != 0) return double(i) / double(q);
    return Json();
  }
  const double v = strtod(s, &end);
  return end != s && *end == 0 && std::isfinite(v) ? Json(v) : Json();
}

}  // namespace

std::string liveEventJson(const std::vector<std::string>& text, const std::vector<bool>& nulls, const std::string& n,
                          const std::string& t) {
  Json values = Json::array(), texts = Json::array();
  for (size_t k = 0; k < text.size(); ++k) {
    const bool null = k < nulls.size() && nulls[k];
    values.push_back(null ? Json() : numberOf(text[k]));
    texts.push_back(null ? Json() : Json(storage::jsonText(text[k])));  // a STRING's bytes need not be UTF-8
  }
  Json j;
  j["values"] = std::move(values);
  j["text"] = std::move(texts);
  if (!n.empty()) j["n"] = atoll(n.c_str());
  if (!t.empty()) {  // "p/q" seconds as a number
    const size_t slash = t.find('/');
    j["t"] = slash == std::string::npos ? atof(t.c_str())
                                        : atof(t.substr(0, slash).c_str()) / atof(t.substr(slash + 1).c_str());
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace tools
