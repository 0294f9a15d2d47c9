// The `.desc` schema of a stream: data fields plus configuration entries
// (REF, TYPE, RETENTION, RETMEMORY), its canonical text form and parser.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace storage {

struct DescEntry {
  enum class Kind { DATA, REF, TYPE, RETENTION, RETMEMORY } kind = Kind::DATA;
  ir::Type type = ir::Type::INTEGER;  // DATA
  std::string name;                   // DATA name, REF path, TYPE profile
  int count = 1;                      // DATA array count (STRING: width)
  int capacity = 0, segments = 0;     // RETENTION; RETMEMORY uses capacity

  bool isData() const { return kind == Kind::DATA; }
  int byteSize() const { return isData() ? (type == ir::Type::STRING ? count : ir::typeSize(type) * count) : 0; }
};

struct DescError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Descriptor {
  std::vector<DescEntry> entries;

  int recordSize() const;
  std::vector<const DescEntry*> dataFields() const;
  std::optional<std::string> ref() const;
  std::optional<std::string> profile() const;  // TYPE, upper-cased
  std::pair<int, int> retention() const;       // capacity, segments
  int retMemory() const;

  std::string text() const;      // canonical multi-line form, no trailing newline
  std::string textLine() const;  // "{ INTEGER a INTEGER b }"

  // Parses descriptor text. Throws DescError with a message naming the token.
  static Descriptor parse(const std::string& text);
  static Descriptor load(const std::string& path);  // throws DescError
  void save(const std::string& path) const;         // written whole, then renamed
  // Data fields only: same count, each at least as large and as wide a type.
  bool compatibleWith(const Descriptor& stored) const;
};

// The type name as written in descriptors (BYTE INTEGER ... RATIONAL STRING).
const char* descTypeName(ir::Type t);

}  // namespace storage
