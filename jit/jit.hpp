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
#include "jit/chain_abi.hpp"
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
// in one function (ChainFn), each record read by the next step where it was
// written; the memory it shares with the engine is chain_abi.hpp's.

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
