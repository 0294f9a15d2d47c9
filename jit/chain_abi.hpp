// The contract between a chain's generated function and the engine that runs
// it (engine/operators/chain.cpp fills these structs, jit/chain*.cpp reads
// and writes them by field name through offsetof). A field added here is
// seen by both sides; neither spells a position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "vm/vm.hpp"

namespace jit {

// One stream of a chain: what its code does with the record before it.
struct ChainStep {
  enum class Kind {
    Map,         // SELECT or + reading whole operand records in place
    Fold,        // .sumc .avg .min .max over a record of INTEGER elements
    Window,      // A@(1, w) over A's one 4-byte element: the record before, moved on by one
    SlideNulls,  // a fused A@(1, w) over one INTEGER element: its count of NULLs
    Slide,       // that window's .sumc/.avg as a sliding sum
  };
  Kind kind = Kind::Map;
  vm::Program program;
  ir::Layout in, out;
  // Operand k: step m+from[k]'s record of this iteration (from[k] < 0) or
  // external record from[k]. SlideNulls: {A's record n, A's record n-w}.
  // Map: operand k's record lies unchanged at input element bases[k].
  std::vector<int> from, bases;
  // Map: w for an operand that is a window A@(1, w) read as a view (below):
  // its record is w of A's 4-byte records, oldest first, so its element j
  // lies at (w-1-j)*4 and its flag at w-1-j. 0 for the others.
  std::vector<int> reversed;
  // Fold and Slide: .sumc .avg .min .max (ir::Op) into the input element's
  // type; an integer sum beyond that type's exact range (ir/fold_range.hpp)
  // calls the engine's fold (ChainArgs::slowFold / slowSlide).
  ir::Op fold = ir::Op::STREAM_SUM;
  int foldElems = 0;  // Fold: INTEGER elements of its operand, 4 bytes each, end to end
  // Not materialised: the next step alone reads its record, in the same
  // iteration; the record stays in registers and only the run's last one is
  // written to the ring (its NULL flags still are, every record).
  bool materialised = true;
  // Window only: not made at all. Its one reader, the next step, reads it
  // some records back, from its producer's ring (ChainStep::reversed).
  bool view = false;
};

// By member, read before the run and written back after it.
struct ChainMember {
  uint8_t* out;       // its record of the run's first iteration, in its ring
  uint8_t* outNulls;  // that record's NULL flags
  // Window: its record before the run (in its ring), from which it moves on.
  const uint8_t* before;
  const uint8_t* beforeNulls;
  uint64_t rounded;  // roundings its code made during the run, added
  // Sliding accumulators. SlideNulls: NULL elements in the window (nulls).
  // Slide: sum, sum of magnitudes and count of present elements.
  int64_t nulls, sum, sumAbs, present;
};

// By external record (an operand read from outside the chain, or from a
// member some records back): where the run's records lie. `data` null: the
// engine gathered record i's pointers into ChainArgs::ext[i*E + e] (flags
// extNulls); else record i is at data + i*dataStep (flags nulls + i*nullsStep).
struct ChainExternal {
  const uint8_t* data;
  int64_t dataStep;
  const uint8_t* nulls;
  int64_t nullsStep;
};

// The fold of `count` INTEGER elements in `type` (ir::Type), as the engine's
// reducer folds them (engine/operators/reduce.cpp).
using FoldFn = void (*)(int32_t op, int32_t type, const uint8_t* data, const uint8_t* nulls, int64_t count,
                        uint8_t* out);
// A sliding fold beyond the exact range: step m's input record for the run's iteration i.
using SlideFn = void (*)(void* ctx, int32_t step, int64_t iteration, uint8_t* out);

struct ChainArgs {
  const uint8_t* const* ext;       // by iteration and external: [i*E + e]
  const uint8_t* const* extNulls;  // their flags
  ChainMember* members;
  const ChainExternal* externals;
  const uint64_t* threadRounded;  // the thread's rounding counter (helpers add to it)
  FoldFn slowFold;
  SlideFn slowSlide;
  void* ctx;  // slowSlide's first argument
  // 1: no settled external record of the run (Request::chainSettled) has a
  // NULL element, each Window step's record before the run has none, each
  // SlideNulls step's count is 0 and each Slide step's present count its
  // window's length: the code's clean loop takes these as constants.
  int64_t clean;
};

// void chain(const ChainArgs* a, int64_t count): `count` iterations, each
// making one record of every step, in step order.
using ChainFn = void (*)(const ChainArgs*, int64_t);

// The generated code reads every field as 8 bytes at its offsetof.
static_assert(std::is_standard_layout_v<ChainArgs> && std::is_standard_layout_v<ChainMember> &&
              std::is_standard_layout_v<ChainExternal>);
static_assert(sizeof(ChainMember) % 8 == 0 && sizeof(ChainExternal) % 8 == 0 && sizeof(ChainArgs) % 8 == 0);

}  // namespace jit
