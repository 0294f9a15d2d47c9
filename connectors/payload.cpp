// MQTT payloads to records and records to JSON (nlohmann::json does the JSON).
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "connectors/mqtt.hpp"
#include "ir/values.hpp"
#include "storage/json_text.hpp"

namespace connectors {

namespace {

using Json = nlohmann::ordered_json;

// A value for a message: short, and never a recursive dump of a nested one.
std::string describe(const Json& v) {
  if (v.is_array()) return "an array of " + std::to_string(v.size());
  if (v.is_object()) return "an object";
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

// One element from text: the whole token must be a value of the type.
bool elementFromText(std::string_view tok, const ir::Element& el, uint8_t* d, uint8_t& isNull, std::string& why) {
  isNull = 0;
  if (tok == "NULL" || tok == "null" || tok == "Null") {
    isNull = 1;
    return true;
  }
  auto whole = [&](auto& v) {
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    return ec == std::errc() && p == tok.data() + tok.size();
  };
  auto bad = [&] {
    why = "'" + std::string(tok) + "' is not a " + ir::typeName(el.type);
    return false;
  };
  switch (el.type) {
    case ir::Type::BYTE: {
      unsigned v;
      if (!whole(v) || v > 255) return bad();
      d[0] = uint8_t(v);
      return true;
    }
    case ir::Type::INTEGER: {
      int32_t v;
      if (!whole(v)) return bad();
      memcpy(d, &v, 4);
      return true;
    }
    case ir::Type::UINT: {
      uint32_t v;
      if (!whole(v)) return bad();
      memcpy(d, &v, 4);
      return true;
    }
    case ir::Type::FLOAT: {
      double v;
      if (!whole(v) || !std::isfinite(v) || std::fabs(v) > 3.4028234663852886e38) return bad();
      const float f = float(v);
      memcpy(d, &f, 4);
      return true;
    }
    case ir::Type::DOUBLE: {
      double v;
      if (!whole(v) || !std::isfinite(v)) return bad();
      memcpy(d, &v, 8);
      return true;
    }
    case ir::Type::RATIONAL: {
      ir::val::Rat r;
      double v;
      if (tok.find('/') != std::string_view::npos) {
        const size_t slash = tok.find('/');
        int64_t n, q;
        auto a = std::from_chars(tok.data(), tok.data() + slash, n);
        auto b = std::from_chars(tok.data() + slash + 1, tok.data() + tok.size(), q);
        if (a.ec != std::errc() || a.ptr != tok.data() + slash || b.ec != std::errc() ||
            b.ptr != tok.data() + tok.size() || q == 0)
          return bad();
        r = ir::val::ratNorm(n, q);
      } else if (whole(v) && std::isfinite(v)) {
        r = ir::val::rationalize(v);
      } else {
        return bad();
      }
      memcpy(d, &r.num, 4);
      memcpy(d + 4, &r.den, 4);
      return true;
    }
    default: return bad();
  }
}

// A FLOAT or DOUBLE written as PUBLISH writes a value JSON has no number for
// (storage::nonFiniteName): "NaN", "Infinity" or "-Infinity", exactly.
bool nonFiniteFromJson(const std::string& s, const ir::Element& el, uint8_t* d, uint8_t& isNull, std::string& why) {
  double x;
  if (s == "NaN") x = std::numeric_limits<double>::quiet_NaN();
  else if (s == "Infinity") x = std::numeric_limits<double>::infinity();
  else if (s == "-Infinity") x = -std::numeric_limits<double>::infinity();
  else {
    why = "'" + describe(s) + "' is not a " + ir::typeName(el.type);
    return false;
  }
  isNull = 0;
  if (el.type == ir::Type::FLOAT) {
    const float f = float(x);
    memcpy(d, &f, 4);
  } else {
    memcpy(d, &x, 8);
  }
  return true;
}

// One element from a JSON value (numbers, or "p/q" text for a RATIONAL).
bool elementFromJson(const Json& v, const ir::Element& el, uint8_t* d, uint8_t& isNull, std::string& why) {
  if (v.is_null()) {
    isNull = 1;
    return true;
  }
  if (el.type == ir::Type::STRING) {
    if (!v.is_string()) {
      why = "a STRING field takes a JSON string";
      return false;
    }
    const std::string& s = v.get_ref<const std::string&>();
    memset(d, 0, size_t(el.size));
    memcpy(d, s.data(), std::min(s.size(), size_t(el.size)));
    isNull = 0;
    return true;
  }
  if (v.is_string() && el.type == ir::Type::RATIONAL)
    return elementFromText(v.get_ref<const std::string&>(), el, d, isNull, why);
  if (v.is_string() && (el.type == ir::Type::FLOAT || el.type == ir::Type::DOUBLE))
    return nonFiniteFromJson(v.get_ref<const std::string&>(), el, d, isNull, why);
  if (!v.is_number()) {
    why = "'" + describe(v) + "' is not a " + ir::typeName(el.type);
    return false;
  }
  isNull = 0;
  const double x = v.get<double>();
  if (ir::isIntegral(el.type)) {
    const double lo = el.type == ir::Type::INTEGER ? -2147483648.0 : 0;
    const double hi = el.type == ir::Type::BYTE ? 255 : el.type == ir::Type::INTEGER ? 2147483647.0 : 4294967295.0;
    if (x != std::floor(x) || x < lo || x > hi) {
      why = describe(v) + " is not a " + ir::typeName(el.type);
      return false;
    }
    const int64_t i = v.is_number_integer() ? v.get<int64_t>() : int64_t(x);
    if (el.type == ir::Type::BYTE) d[0] = uint8_t(i);
    else if (el.type == ir::Type::INTEGER) {
      const int32_t w = int32_t(i);
      memcpy(d, &w, 4);
    } else {
      const uint32_t w = uint32_t(i);
      memcpy(d, &w, 4);
    }
    return true;
  }
  switch (el.type) {
    case ir::Type::FLOAT: {
      if (std::fabs(x) > 3.4028234663852886e38) {
        why = describe(v) + " is out of the range of a FLOAT";
        return false;
      }
      const float f = float(x);
      memcpy(d, &f, 4);
      return true;
    }
    case ir::Type::DOUBLE: memcpy(d, &x, 8); return true;
    case ir::Type::RATIONAL: {
      const ir::val::Rat r = v.is_number_integer() ? ir::val::ratFromInt(v.get<int64_t>()) : ir::val::rationalize(x);
      memcpy(d, &r.num, 4);
      memcpy(d + 4, &r.den, 4);
      return true;
    }
    default: why = std::string("a JSON number cannot be a ") + ir::typeName(el.type); return false;
  }
}

bool fromJson(const Json& obj, const std::vector<ir::Field>& schema, const ir::Layout& layout, uint8_t* rec,
              uint8_t* nulls, int64_t& index, std::string& why) {
  if (auto n = obj.find("n"); n != obj.end() && n->is_number_integer()) index = n->get<int64_t>();
  for (size_t e = 0; e < layout.elems.size();) {
    const ir::Element& el = layout.elems[e];
    const ir::Field& f = schema[size_t(el.field)];
    const size_t count = el.type == ir::Type::STRING ? 1 : size_t(f.rarray);
    auto it = obj.find(f.name);
    if (it == obj.end() || it->is_null()) {
      for (size_t k = 0; k < count; ++k) nulls[e + k] = 1;
    } else if (count > 1 || it->is_array()) {
      if (!it->is_array() || it->size() != count) {
        why = "field '" + f.name + "' takes an array of " + std::to_string(count) + " values";
        return false;
      }
      for (size_t k = 0; k < count; ++k)
        if (!elementFromJson((*it)[k], layout.elems[e + k], rec + layout.elems[e + k].offset, nulls[e + k], why)) {
          why = "field '" + f.name + "': " + why;
          return false;
        }
    } else if (!elementFromJson(*it, el, rec + el.offset, nulls[e], why)) {
      why = "field '" + f.name + "': " + why;
      return false;
    }
    e += count;
  }
  return true;
}

// Values are separated by blanks, or by a comma with blanks around it. A
// comma with no value before it (",," or a leading or trailing comma) is an
// empty value: NULL, as an empty CSV field is.
bool fromText(const std::string& p, const ir::Layout& layout, uint8_t* rec, uint8_t* nulls, std::string& why) {
  size_t pos = 0, e = 0;
  auto blank = [&] {
    while (pos < p.size() && isspace((unsigned char)p[pos])) ++pos;
  };
  auto value = [&](std::string_view tok) {
    if (e >= layout.elems.size()) {
      why = "more values than the " + std::to_string(layout.elems.size()) + " declared";
      return false;
    }
    const ir::Element& el = layout.elems[e++];
    uint8_t& isNull = nulls[e - 1];
    if (tok.empty()) {
      isNull = 1;
      return true;
    }
    if (el.type != ir::Type::STRING) return elementFromText(tok, el, rec + el.offset, isNull, why);
    memset(rec + el.offset, 0, size_t(el.size));
    memcpy(rec + el.offset, tok.data(), std::min(tok.size(), size_t(el.size)));
    isNull = 0;
    return true;
  };
  blank();
  while (pos < p.size()) {
    std::string_view tok;
    if (p[pos] != ',') {
      const size_t b = pos;
      while (pos < p.size() && p[pos] != ',' && !isspace((unsigned char)p[pos])) ++pos;
      tok = std::string_view(p.data() + b, pos - b);
      blank();
    }
    if (!value(tok)) return false;
    if (pos < p.size() && p[pos] == ',') {
      ++pos;
      blank();
      if (pos >= p.size() && !value({})) return false;  // a trailing comma: one more, empty
    }
  }
  if (e != layout.elems.size()) {
    why = std::to_string(e) + " values where " + std::to_string(layout.elems.size()) + " are declared";
    return false;
  }
  return true;
}

Json elementJson(const ir::Element& el, const uint8_t* p) {
  switch (el.type) {
    case ir::Type::BYTE: return p[0];
    case ir::Type::INTEGER: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case ir::Type::UINT: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case ir::Type::FLOAT: {
      float v;
      memcpy(&v, p, 4);
      return std::isfinite(v) ? Json(double(v)) : Json(storage::nonFiniteName(v));
    }
    case ir::Type::DOUBLE: {
      double v;
      memcpy(&v, p, 8);
      return std::isfinite(v) ? Json(v) : Json(storage::nonFiniteName(v));
    }
    case ir::Type::RATIONAL: {
      ir::val::Rat r;
      memcpy(&r.num, p, 4);
      memcpy(&r.den, p + 4, 4);
      return double(r.num) / double(r.den);
    }
    case ir::Type::INTPAIR:
    case ir::Type::IDXPAIR: {
      int32_t a, b;
      memcpy(&a, p, 4);
      memcpy(&b, p + 4, 4);
      return Json::array({a, b});
    }
    case ir::Type::STRING:
      return storage::jsonText(
          std::string_view(reinterpret_cast<const char*>(p), strnlen((const char*)p, size_t(el.size))));
    default: return Json();
  }
}

std::string exactText(const uint8_t* p) {
  ir::val::Rat r;
  memcpy(&r.num, p, 4);
  memcpy(&r.den, p + 4, 4);
  return ir::val::fmtRat(ir::val::ratNormalize(r));
}

}  // namespace

std::string checkPayload(std::string_view p, int64_t maxBytes, int maxDepth) {
  if (int64_t(p.size()) > maxBytes)
    return std::to_string(p.size()) + " bytes, over the limit of " + std::to_string(maxBytes);
  const size_t first = p.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || p[first] != '{') return {};  // text: nothing nests
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = first; i < p.size(); ++i) {
    const char c = p[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > maxDepth) return "nested deeper than " + std::to_string(maxDepth) + " levels";
    } else if (c == '}' || c == ']') {
      --depth;  // unbalanced: the parser says so
    }
  }
  return {};
}

bool decodePayload(const std::string& payload, const std::vector<ir::Field>& schema, const ir::Layout& layout,
                   uint8_t* rec, uint8_t* nulls, int64_t& index, std::string& why) {
  index = -1;
  memset(rec, 0, size_t(layout.recordSize));
  memset(nulls, 0, layout.elems.size());
  const size_t first = payload.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && payload[first] == '{') {
    Json obj = Json::parse(payload, nullptr, false);
    if (obj.is_discarded() || !obj.is_object()) {
      why = "not a JSON object";
      return false;
    }
    return fromJson(obj, schema, layout, rec, nulls, index, why);
  }
  return fromText(payload, layout, rec, nulls, why);
}

std::string encodeRecord(const std::string& stream, int64_t n, const std::string& tExact,
                         const std::vector<ir::Field>& schema, const ir::Layout& layout, const uint8_t* rec,
                         const uint8_t* nulls) {
  Json j;
  j["stream"] = stream;
  j["n"] = n;
  ir::val::Rat t{0, 1};
  ir::val::parseRational(tExact, t);
  j["t"] = double(t.num) / double(t.den);
  j["t_exact"] = tExact;
  for (size_t e = 0; e < layout.elems.size();) {
    const ir::Element& el = layout.elems[e];
    const ir::Field& f = schema[size_t(el.field)];
    const size_t count = el.type == ir::Type::STRING ? 1 : size_t(f.rarray);
    auto one = [&](size_t k) { return nulls[k] ? Json() : elementJson(layout.elems[k], rec + layout.elems[k].offset); };
    auto exact = [&](size_t k) { return nulls[k] ? Json() : Json(exactText(rec + layout.elems[k].offset)); };
    if (count == 1) {
      j[f.name] = one(e);
      if (el.type == ir::Type::RATIONAL) j[f.name + "_exact"] = exact(e);
    } else {
      Json a = Json::array(), x = Json::array();
      for (size_t k = e; k < e + count; ++k) a.push_back(one(k)), x.push_back(exact(k));
      j[f.name] = std::move(a);
      if (el.type == ir::Type::RATIONAL) j[f.name + "_exact"] = std::move(x);
    }
    e += count;
  }
  // Every string is valid UTF-8 already (jsonText); replace, not throw, all the same.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace connectors
