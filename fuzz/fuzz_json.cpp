// libFuzzer target: the JSON writers of record values (storage/json_text.hpp)
// over arbitrary record bytes: a PUBLISH payload (connectors::encodeRecord),
// an xqry -j record event (xqry::recordEvent, jsonLine) and an /events message
// (tools::liveEventJson).
//
// Input: byte 0 = the STRING's width - 1 (modulo 32); then the record of the
// layout s STRING[w], d DOUBLE, f FLOAT, r RATIONAL, i INTEGER, a DOUBLE[2];
// then one NULL flag per element (bit 0); missing bytes are zeros. The bytes
// after the flags are one more string for jsonText and appendJsonString.
// Expected: nothing throws; every output parses as JSON (nlohmann, strict
// UTF-8) with NULL as null, a STRING as jsonText of its bytes (the same text
// nlohmann's error_handler_t::replace gives), a NaN or infinity as "NaN",
// "Infinity" or "-Infinity"; and the PUBLISH payload read back by the MQTT
// source's decoder gives the record again (a STRING exactly when its bytes are
// UTF-8, else what fits of jsonText's text; a RATIONAL when it is whole).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/mqtt.hpp"
#include "fuzz_support.hpp"
#include "ir/layout.hpp"
#include "ir/values.hpp"
#include "storage/element_text.hpp"
#include "storage/json_text.hpp"
#include "tools/live_page.hpp"
#include "tools/xqry.hpp"

namespace {

constexpr const char* kName = "fuzz_json";
using Json = nlohmann::json;

Json parsed(const std::string& text, const char* what) {
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string(what) + " is not JSON (" + e.what() + "): " + text.substr(0, 200));
  }
}

// What nlohmann's dump() with error_handler_t::replace makes of the bytes, read back.
std::string replacedByNlohmann(const std::string& bytes) {
  return parsed(Json(bytes).dump(-1, ' ', false, Json::error_handler_t::replace), "nlohmann's dump").get<std::string>();
}

void checkString(const std::string& bytes) {
  const std::string text = storage::jsonText(bytes);
  std::string quoted;
  storage::appendJsonString(quoted, bytes);
  const Json back = parsed(quoted, "appendJsonString");
  fuzz::check(back.is_string() && back.get<std::string>() == text, kName, "appendJsonString reads back as other text");
  fuzz::check(text == replacedByNlohmann(bytes), kName, "jsonText differs from nlohmann's replacement");
  fuzz::check(storage::jsonText(text) == text, kName, "jsonText changes its own output");
}

template <class T>
T load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}

bool sameBits(const void* a, const void* b, size_t n) { return memcmp(a, b, n) == 0; }

// A FLOAT or DOUBLE value of a PUBLISH payload.
void checkReal(const nlohmann::ordered_json& j, double v) {
  if (const char* name = storage::nonFiniteName(v)) {
    fuzz::check(j.is_string() && j.get<std::string>() == name, kName, "a NaN or infinity not written as its name");
  } else {
    fuzz::check(j.is_number() && j.get<double>() == v && std::signbit(j.get<double>()) == std::signbit(v), kName,
                "a finite value written as another");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<ir::Field> schema;
  auto field = [&](const char* name, ir::Type t, int rlen, int rarray) {
    ir::Field f;
    f.name = name;
    f.type = t;
    f.rlen = rlen;
    f.rarray = rarray;
    schema.push_back(f);
  };
  field("s", ir::Type::STRING, data[0] % 32 + 1, 1);
  field("d", ir::Type::DOUBLE, 8, 1);
  field("f", ir::Type::FLOAT, 4, 1);
  field("r", ir::Type::RATIONAL, 8, 1);
  field("i", ir::Type::INTEGER, 4, 1);
  field("a", ir::Type::DOUBLE, 8, 2);
  const ir::Layout layout = ir::Layout::of(schema);
  const size_t elems = layout.elems.size();
  std::vector<uint8_t> rec(size_t(layout.recordSize)), nulls(elems);
  size_t pos = 1;
  for (auto& b : rec) b = pos < size ? data[pos++] : 0;
  for (auto& b : nulls) b = pos < size ? data[pos++] & 1 : 0;
  const std::string rest(reinterpret_cast<const char*>(data) + pos, size - pos);

  try {
    checkString(rest);
    std::vector<std::string> text;
    std::vector<bool> isNull;
    for (size_t e = 0; e < elems; ++e) {
      const ir::Element& el = layout.elems[e];
      text.push_back(storage::elementText(el.type, rec.data() + el.offset, el.size));
      isNull.push_back(nulls[e] != 0);
    }
    const ir::Element& s = layout.elems[0];
    const std::string sBytes(reinterpret_cast<const char*>(rec.data()),
                             strnlen((const char*)rec.data(), size_t(s.size)));
    checkString(sBytes);

    // PUBLISH.
    const std::string payload = connectors::encodeRecord("o", 41, "21/5", schema, layout, rec.data(), nulls.data());
    nlohmann::ordered_json p;
    try {
      p = nlohmann::ordered_json::parse(payload);
    } catch (const std::exception& e) {
      fuzz::die(kName, std::string("the PUBLISH payload is not JSON: ") + e.what());
    }
    fuzz::check(p.is_object() && p["n"] == 41 && p["t_exact"] == "21/5", kName, "the PUBLISH payload's header");
    auto value = [&](const char* key, int k) -> const nlohmann::ordered_json& {
      const nlohmann::ordered_json& v = p.at(key);
      return k < 0 ? v : v.at(size_t(k));
    };
    const struct {
      const char* key;
      int k;
    } where[] = {{"s", -1}, {"d", -1}, {"f", -1}, {"r", -1}, {"i", -1}, {"a", 0}, {"a", 1}};
    for (size_t e = 0; e < elems; ++e) {
      const ir::Element& el = layout.elems[e];
      const uint8_t* b = rec.data() + el.offset;
      const nlohmann::ordered_json& v = value(where[e].key, where[e].k);
      if (nulls[e]) {
        fuzz::check(v.is_null(), kName, "a NULL not written as null");
        continue;
      }
      switch (el.type) {
        case ir::Type::STRING:
          fuzz::check(v.is_string() && v.get<std::string>() == storage::jsonText(sBytes), kName,
                      "a STRING not written as jsonText of its bytes");
          break;
        case ir::Type::DOUBLE: checkReal(v, load<double>(b)); break;
        case ir::Type::FLOAT: checkReal(v, double(load<float>(b))); break;
        case ir::Type::INTEGER:
          fuzz::check(v.is_number_integer() && v.get<int64_t>() == load<int32_t>(b), kName, "an INTEGER");
          break;
        case ir::Type::RATIONAL: {
          fuzz::check(v.is_number() || v.is_null(), kName, "a RATIONAL that is no number");
          ir::val::Rat r{load<int32_t>(b), load<int32_t>(b + 4)};
          fuzz::check(p.at("r_exact") == ir::val::fmtRat(ir::val::ratNormalize(r)), kName, "a RATIONAL's r_exact");
          break;
        }
        default: break;
      }
    }

    // The payload read back by an MQTT source of the same layout.
    std::vector<uint8_t> rec2(rec.size()), nulls2(elems);
    int64_t index = -1;
    std::string why;
    fuzz::check(connectors::decodePayload(payload, schema, layout, rec2.data(), nulls2.data(), index, why), kName,
                "the MQTT source refuses a PUBLISH payload: " + why);
    fuzz::check(index == 41, kName, "the read-back index");
    for (size_t e = 0; e < elems; ++e) {
      const ir::Element& el = layout.elems[e];
      const uint8_t* a = rec.data() + el.offset;
      const uint8_t* b = rec2.data() + el.offset;
      if (el.type == ir::Type::RATIONAL) {  // a number: exact when whole (INT32_MIN/1 is no RATIONAL)
        const ir::val::Rat r = ir::val::ratNormalize({load<int32_t>(a), load<int32_t>(a + 4)});
        if (!nulls[e] && r.den == 1 && load<int32_t>(a + 4) != 0)
          fuzz::check(!nulls2[e] && load<int32_t>(b) == r.num && load<int32_t>(b + 4) == 1, kName,
                      "a whole RATIONAL read back as another");
        continue;
      }
      fuzz::check(nulls2[e] == nulls[e], kName, "a NULL flag read back as another");
      if (nulls[e]) continue;
      switch (el.type) {
        case ir::Type::STRING: {
          const std::string t = storage::jsonText(sBytes);
          const std::string want = t.substr(0, std::min(t.size(), size_t(el.size)));
          const std::string got(reinterpret_cast<const char*>(b), strnlen((const char*)b, size_t(el.size)));
          fuzz::check(got == want && (t != sBytes || got == sBytes), kName, "a STRING read back as another");
          break;
        }
        case ir::Type::DOUBLE: {
          const double x = load<double>(a), y = load<double>(b);
          fuzz::check(std::isnan(x) ? std::isnan(y) : sameBits(&x, &y, 8), kName, "a DOUBLE read back as another");
          break;
        }
        case ir::Type::FLOAT: {
          const float x = load<float>(a), y = load<float>(b);
          fuzz::check(std::isnan(x) ? std::isnan(y) : sameBits(&x, &y, 4), kName, "a FLOAT read back as another");
          break;
        }
        default: fuzz::check(sameBits(a, b, size_t(el.size)), kName, "a value read back as another"); break;
      }
    }

    // xqry -j.
    const Json x = parsed(xqry::jsonLine(xqry::recordEvent("o", text, isNull, "41", "21/5")), "an xqry -j line");
    const Json l = parsed(tools::liveEventJson(text, isNull, "41", "21/5"), "an /events message");
    for (size_t e = 0; e < elems; ++e) {
      const Json& xv = x.at("values").at(e);
      const Json& lt = l.at("text").at(e);
      const Json& lv = l.at("values").at(e);
      if (nulls[e]) {
        fuzz::check(xv.is_null() && lt.is_null() && lv.is_null(), kName, "a NULL not null (xqry -j, /events)");
        continue;
      }
      const std::string want = storage::jsonText(text[e]);
      fuzz::check(xv == want, kName, "an xqry -j value other than jsonText of its text");
      fuzz::check(lt == want, kName, "an /events text other than jsonText of its text");
      fuzz::check(lv.is_null() || lv.is_number(), kName, "an /events value that is no number");
      fuzz::check(want == replacedByNlohmann(text[e]), kName, "jsonText differs from nlohmann's replacement");
    }
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
