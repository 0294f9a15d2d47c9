// The JIT: VM programs lowered to LLVM IR (driven by the same opcode table,
// vm/opcodes.hpp) and compiled with ORC LLJIT at -O2, once per plan unit.
// Each unit of code (the plan, later each ad hoc import) has its own
// ResourceTracker so it can be removed again. A program the JIT cannot lower
// (string operations, for now) is left to the VM, and the caller is told why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/layout.hpp"
#include "vm/vm.hpp"

namespace jit {

// void step(const uint8_t* in, const uint8_t* inNulls, uint8_t* out, uint8_t* outNulls)
using FieldFn = void (*)(const uint8_t*, const uint8_t*, uint8_t*, uint8_t*);
// A stream step over a run of records:
// void run(const uint8_t* const* operands, const uint8_t* const* operandNulls,
//          uint8_t* out, uint8_t* outNulls, int64_t count)
// Record i reads operand k at operands[i*K + k] (K = number of operands) and
// writes output record i at out + i*recordSize (the stream's history ring).
using BlockFn = void (*)(const uint8_t* const*, const uint8_t* const*, uint8_t*, uint8_t*, int64_t);

// A chain: streams where each reads the one before it, run record by record
// in one function, each record read by the next step where it was written (see
// docs/architecture.md, "Pipeline compilation").
// void chain(const ChainArgs* a, int64_t count)
// Record i reads external record e at strided[4e] + i*strided[4e+1] (flags
// strided[4e+2] + i*strided[4e+3]) when strided[4e] is not 0, else at
// ext[i*E + e] (flags extNulls[i*E + e]); step m writes its record
// i at outs[m] + i*recordSize (its history ring) and adds the roundings its
// code made (*threadRounded, the thread's counter) to rounded[m]. A Window
// step starts from its record before the first (last[2m], flags last[2m+1]);
// a sliding step's accumulators are state[4m..4m+3], read and written back.
using FoldFn = void (*)(int32_t op, int32_t type, const uint8_t* data, const uint8_t* nulls, int64_t count,
                        uint8_t* out);
// A sliding fold beyond the exact range: step m's input record for the run's record i.
using SlideFn = void (*)(void* ctx, int32_t step, int64_t record, uint8_t* out);
struct ChainArgs {
  const uint8_t* const* ext;
  const uint8_t* const* extNulls;
  uint8_t* const* outs;
  uint8_t* const* outNulls;
  uint64_t* rounded;
  const uint64_t* threadRounded;
  FoldFn slowFold;
  const uint8_t* const* last;
  int64_t* state;
  void* ctx;
  SlideFn slowSlide;
  const int64_t* strided;
  // 1: no settled external record of the run (Request::chainSettled) has a
  // NULL element, each Window step's record before the run has none, each
  // SlideNulls step's count is 0 and each Slide step's present count its
  // window's length.
  int64_t clean;
};
using ChainFn = void (*)(const ChainArgs*, int64_t);

// One stream of a chain.
struct ChainStep {
  enum class Kind { Map, Fold, Window, SlideNulls, Slide };
  Kind kind = Kind::Map;
  vm::Program program;
  ir::Layout in, out;
  // Operand k: step m+from[k]'s record (from[k] < 0) or external record from[k].
  // Map: operand k's record lies unchanged at input element bases[k].
  std::vector<int> from, bases;
  // Fold: .sumc .avg .min .max (ir::Op) over the INTEGER elements (4 bytes
  // each, end to end) of its one operand, into the input element's type; an
  // integer sum beyond that type's exact range calls slowFold.
  ir::Op fold = ir::Op::STREAM_SUM;
  int foldElems = 0;
  // Window: A@(1, w), w > 0, over the previous step's one 4-byte element:
  // the record before, moved on by one element (no program runs).
  // A window A@(1, w) that is not materialised, folded by .sumc or .avg as
  // it slides over A's one INTEGER element: from = {A's record n, A's record
  // n-w (external)}. SlideNulls (the window) counts its NULL elements and
  // writes flag byte 0 of each record: 1 when it holds one. Slide (its
  // reducer, the next step) keeps the sum, the sum of magnitudes and the
  // count of present elements.
  // Not materialised: the next step alone reads its record, in the same
  // iteration; the record stays in registers and only the run's last one is
  // written to the ring (its NULL flags still are, every record).
  bool materialised = true;
};

struct Request {
  std::string name;  // unique symbol name within the unit
  const vm::Program* program;
  const ir::Layout* in;
  const ir::Layout* out;
  // Block form (BlockFn): the first input element of each operand; empty:
  // one operand, the whole input record.
  bool block = false;
  std::vector<int> operands;
  const std::vector<ChainStep>* chain = nullptr;  // set: a chain (ChainFn), the fields above unused
  // By external record: the step whose ring it reads (a member's record
  // some records back), or -1 (a stream outside the chain). Its size is E.
  std::vector<int> chainExternals = {};
  // By external record: 1 when a clean run (ChainArgs::clean) has checked
  // its flags (they are read as zeros there), 0 when they are read as they
  // are (the run may write its records). Its size is E.
  std::vector<char> chainSettled = {};
};

struct Result {
  FieldFn fn = nullptr;     // nullptr: run this one on the VM
  BlockFn block = nullptr;  // the block form, when asked for
  ChainFn chain = nullptr;  // a chain
  std::string why;          // why not, when fn is null
  bool cached = false;      // the unit's code came from the code cache
};

// Quick: code generated without optimisation, for a fast start (the plan's
// first code). Optimised: the -O2 pipeline and full code generation.
enum class Tier { Quick = 0, Optimised = 1 };

class Jit {
 public:
  // nullptr (with `error` set) when LLVM cannot be initialised here.
  static std::unique_ptr<Jit> create(std::string& error);
  ~Jit();

  // Compiles a unit of programs together; results in request order.
  // `unit` names the resource tracker (remove it with removeUnit).
  std::vector<Result> compile(const std::string& unit, const std::vector<Request>& requests,
                              Tier tier = Tier::Optimised);
  void removeUnit(const std::string& unit, Tier tier = Tier::Optimised);

  // Keeps compiled units in `dir` (see code_cache.hpp) and takes them from
  // there when the same unit comes again. False, with the reason in `why`,
  // when the directory cannot be used (the JIT then compiles every unit).
  bool useCache(const std::string& dir, uint64_t budgetBytes, std::string& why);

  // Whether the lowering supports this program (no string operations).
  static bool supports(const vm::Program& p, std::string& why);

 private:
  Jit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jit
