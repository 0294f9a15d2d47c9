// Declared sources: text files (whitespace-separated tokens), binary files
// and devices (fixed-size little-endian records). Each read yields one
// record of the declared layout plus one NULL flag per flat element.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/layout.hpp"

namespace storage {

class Source {
 public:
  virtual ~Source() = default;
  // Reads the next record. At the end of the data the source wraps to its
  // beginning, or with `oneShot` yields all-NULL records from then on.
  virtual void next(uint8_t* rec, uint8_t* nulls) = 0;
  bool exhausted() const { return exhausted_; }
  const std::string& path() const { return path_; }

 protected:
  Source(std::string path, const ir::Layout& l, bool oneShot) : path_(std::move(path)), layout_(l), oneShot_(oneShot) {}
  void allNull(uint8_t* rec, uint8_t* nulls) const;
  std::string path_;
  ir::Layout layout_;
  bool oneShot_;
  bool exhausted_ = false;
};

enum class SourceFormat { TEXT, BINARY };

// Opens a source; a missing or unreadable file gives all-NULL records and a
// warning on stderr naming the file (compatible behaviour).
std::unique_ptr<Source> openSource(SourceFormat f, const std::string& path, const ir::Layout& layout, bool oneShot);

}  // namespace storage
