// One element value converted between record types (interleave promotion,
// windows, reducers): the same casts as the VM's conversions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ir/ir.hpp"
#include "vm/values.hpp"

namespace engine {

using ir::Type;

inline void convertElem(Type st, const uint8_t* s, int ssize, Type dt, uint8_t* d, int dsize) {
  if (st == dt && ssize == dsize) {
    memcpy(d, s, size_t(dsize));
    return;
  }
  if (st == dt) {
    int n = std::min(ssize, dsize);
    memcpy(d, s, size_t(n));
    if (dsize > n) memset(d + n, 0, size_t(dsize - n));
    return;
  }
  if (st == Type::STRING || dt == Type::STRING) {
    memset(d, 0, size_t(dsize));  // no implicit string conversion in records
    return;
  }
  auto asDouble = [&]() -> double {
    switch (st) {
      case Type::BYTE: return double(*s);
      case Type::INTEGER: { int32_t v; memcpy(&v, s, 4); return v; }
      case Type::UINT: { uint32_t v; memcpy(&v, s, 4); return v; }
      case Type::FLOAT: { float v; memcpy(&v, s, 4); return v; }
      case Type::DOUBLE: { double v; memcpy(&v, s, 8); return v; }
      case Type::RATIONAL: { int32_t v[2]; memcpy(v, s, 8); return double(v[0]) / double(v[1]); }
      default: return 0;
    }
  };
  auto asInt64 = [&]() -> int64_t {
    switch (st) {
      case Type::BYTE: return *s;
      case Type::INTEGER: { int32_t v; memcpy(&v, s, 4); return v; }
      case Type::UINT: { uint32_t v; memcpy(&v, s, 4); return v; }
      case Type::RATIONAL: { vm::val::Rat r; memcpy(&r, s, 8); return vm::val::ratToInt(r); }
      default: return int64_t(asDouble());
    }
  };
  bool srcFloat = st == Type::FLOAT || st == Type::DOUBLE;
  switch (dt) {
    case Type::BYTE: { uint8_t v = srcFloat ? vm::val::f2u8(asDouble()) : uint8_t(asInt64()); memcpy(d, &v, 1); break; }
    case Type::INTEGER: { int32_t v = srcFloat ? vm::val::f2i32(asDouble()) : int32_t(asInt64()); memcpy(d, &v, 4); break; }
    case Type::UINT: { uint32_t v = srcFloat ? vm::val::f2u32(asDouble()) : uint32_t(asInt64()); memcpy(d, &v, 4); break; }
    case Type::FLOAT: { float v = st == Type::RATIONAL ? [&] { int32_t r[2]; memcpy(r, s, 8); return float(r[0]) / float(r[1]); }() : float(asDouble()); memcpy(d, &v, 4); break; }
    case Type::DOUBLE: { double v = asDouble(); memcpy(d, &v, 8); break; }
    case Type::RATIONAL: {
      vm::val::Rat r = srcFloat ? vm::val::rationalize(asDouble()) : vm::val::ratFromInt(asInt64());
      memcpy(d, &r.num, 4);
      memcpy(d + 4, &r.den, 4);
      break;
    }
    default: memset(d, 0, size_t(dsize));
  }
}

}  // namespace engine
