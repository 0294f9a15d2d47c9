// One element value converted between record types (interleave promotion,
// windows, reducers): the VM's conversion matrix (vm/semantics.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ir/ir.hpp"
#include "ir/semantics.hpp"

namespace engine {

using ir::Type;

namespace convert_detail {
template <class C>
C loadAs(const uint8_t* s) {
  C v;
  memcpy(&v, s, sizeof v);
  return v;
}
template <class C>
void storeAs(uint8_t* d, C v) {
  memcpy(d, &v, sizeof v);
}
}  // namespace convert_detail

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
  using convert_detail::loadAs, convert_detail::storeAs;
  // The value in the destination type, by the VM's conversion matrix.
  auto to = [&](auto v) {
    switch (dt) {
      case Type::BYTE: storeAs(d, ir::val::convert<uint8_t>(v)); break;
      case Type::INTEGER: storeAs(d, ir::val::convert<int32_t>(v)); break;
      case Type::UINT: storeAs(d, ir::val::convert<uint32_t>(v)); break;
      case Type::FLOAT: storeAs(d, ir::val::convert<float>(v)); break;
      case Type::DOUBLE: storeAs(d, ir::val::convert<double>(v)); break;
      case Type::RATIONAL: storeAs(d, ir::val::convert<ir::val::Rat>(v)); break;
      default: memset(d, 0, size_t(dsize));
    }
  };
  switch (st) {
    case Type::BYTE: to(loadAs<uint8_t>(s)); break;
    case Type::INTEGER: to(loadAs<int32_t>(s)); break;
    case Type::UINT: to(loadAs<uint32_t>(s)); break;
    case Type::FLOAT: to(loadAs<float>(s)); break;
    case Type::DOUBLE: to(loadAs<double>(s)); break;
    case Type::RATIONAL: to(loadAs<ir::val::Rat>(s)); break;
    default: to(int32_t(0));  // no number: zero
  }
}

}  // namespace engine
