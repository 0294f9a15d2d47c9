// Element-to-text formatting of the programs (xtrdb payloads, IPC value texts).
#include "element_text.hpp"

#include <cstdio>
#include <cstring>

#include "ir/values.hpp"

namespace storage {

namespace {

template <class T>
T load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}

std::string printed(const char* format, auto v) {
  char buf[64];
  snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string elementText(ir::Type t, const uint8_t* p, int size, IntBase base) {
  const bool hex = base == IntBase::HEX;
  if (size < ir::typeSize(t) || t == ir::Type::NULLT) return {};  // a STRING needs one byte
  switch (t) {
    case ir::Type::BYTE: return hex ? printed("%02x", unsigned(p[0])) : std::to_string(unsigned(p[0]));
    case ir::Type::INTEGER: {
      const auto v = load<int32_t>(p);
      return hex ? printed("%08x", uint32_t(v)) : std::to_string(v);
    }
    case ir::Type::UINT: {
      const auto v = load<uint32_t>(p);
      return hex ? printed("%08x", v) : std::to_string(v);
    }
    case ir::Type::FLOAT: return printed("%.6g", double(load<float>(p)));
    case ir::Type::DOUBLE: return printed("%.6g", load<double>(p));
    case ir::Type::RATIONAL: {
      ir::val::Rat r;
      memcpy(&r.num, p, 4);
      memcpy(&r.den, p + 4, 4);
      return ir::val::fmtRat(ir::val::ratNormalize(r));  // another program's file may break the rule
    }
    case ir::Type::INTPAIR:
    case ir::Type::IDXPAIR: return std::to_string(load<int32_t>(p)) + "," + std::to_string(load<int32_t>(p + 4));
    case ir::Type::STRING: {
      const void* z = memchr(p, 0, size_t(size));
      const size_t n = z ? size_t(static_cast<const uint8_t*>(z) - p) : size_t(size);
      return std::string(reinterpret_cast<const char*>(p), n);
    }
    case ir::Type::NULLT: break;
  }
  return {};
}

std::string entryText(const DescEntry& e, const uint8_t* p, IntBase base) {
  if (e.type == ir::Type::STRING) return elementText(e.type, p, e.count, base);
  const int es = ir::typeSize(e.type);
  std::string out;
  for (int k = 0; k < e.count; ++k) {
    if (k) out += ' ';
    out += elementText(e.type, p + k * es, es, base);
  }
  return out;
}

}  // namespace storage
