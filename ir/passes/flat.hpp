// Flat element layout of the plan's streams, computed once per stream, and a
// stream's input record read slot by slot without building it. The passes
// that read element shapes of their operands (shape inference, the
// simplifier, offset localisation) use these, so a consumer of a wide stream
// costs what it reads, not the width of what it reads from.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.hpp"
#include "passes.hpp"

namespace ir::ops {
struct StreamOperator;
}

namespace ir::passes {

// Valid while the plan's vector of queries is not changed; a stream whose
// field shapes change must be invalidate()d (its flat counts never change in
// the passes that use this, but its types and sizes do).
class FlatIndex {
 public:
  explicit FlatIndex(const Plan& p) : p_(p) {}
  const Plan& plan() const { return p_; }

  int width(const Query& s);  // flatWidth(s)
  // flattenSchema(s)[i] without its name; nullopt when i is out of range.
  std::optional<Field> slot(const Query& s, int i);
  std::pair<Type, int> widest(const Query& s);  // widest(s)
  void invalidate(const Query& s) { e_.erase(&s); }

 private:
  struct Entry {
    int width = 0;
    std::vector<int> first;  // first flat element of every field; empty when every field has one
    bool hasWidest = false;
    std::pair<Type, int> widest{Type::BYTE, 1};
  };
  Entry& entry(const Query& s);
  const Plan& p_;
  std::unordered_map<const Query*, Entry> e_;
};

// inputRecord(p, q) one slot at a time.
class InputView {
 public:
  InputView(FlatIndex& flat, const Query& q);
  int size() const { return size_; }
  std::optional<Field> slot(int i);  // inputRecord(p, q)[i] without its name

 private:
  FlatIndex& flat_;
  const Query* q_;
  const Query* s1_ = nullptr;
  const Query* s2_ = nullptr;
  const ops::StreamOperator* op_ = nullptr;  // none: a copy of s1
  int size_ = 0;
  std::optional<Field> fixed_;  // the one shape of every slot (windows, reducers), once asked
};

// Names a program refers to with PUSH_ID (stream, index).
void referencedStreams(const Program& prog, std::set<std::string>& out);

// sourceOffsets(p, q) for the streams in `wanted` (others may be missing).
// The walk through q's substrates is skipped when every wanted name is q
// itself or a direct operand (it cannot change their entries).
SourceOffsets sourceOffsetsFor(FlatIndex& flat, const Query& q, const std::set<std::string>& wanted);

}  // namespace ir::passes
