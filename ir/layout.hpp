// Physical layout of a record: one entry per flat element (an element of a
// numeric array, or a whole STRING), packed in field order without padding.
#pragma once

#include <vector>

#include "ir.hpp"

namespace ir {

struct Element {
  Type type;
  int offset;  // byte offset in the record
  int size;    // bytes (STRING: its width)
  int field;   // index of the schema field it belongs to
};

struct Layout {
  std::vector<Element> elems;
  int recordSize = 0;
  int fieldCount = 0;

  static Layout of(const std::vector<Field>& schema) {
    Layout l;
    for (size_t f = 0; f < schema.size(); ++f) {
      const Field& fd = schema[f];
      if (fd.type == Type::STRING) {
        l.elems.push_back({fd.type, l.recordSize, fd.rlen * fd.rarray, int(f)});
        l.recordSize += fd.rlen * fd.rarray;
      } else {
        for (int e = 0; e < fd.rarray; ++e) {
          l.elems.push_back({fd.type, l.recordSize, fd.rlen, int(f)});
          l.recordSize += fd.rlen;
        }
      }
    }
    l.fieldCount = int(schema.size());
    return l;
  }
};

}  // namespace ir
