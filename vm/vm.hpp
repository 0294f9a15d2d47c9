// Field-program VM: each field program of the plan lowered to typed stack
// bytecode (the instruction table, vm/opcodes.hpp). Operands are element
// indices resolved at plan time; evaluation allocates nothing per record
// (strings reuse the thread's pool).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "opcodes.hpp"

namespace vm {

struct Instr {
  Op op;
  int32_t a = 0, b = 0;
};

// One typed value on the stack.
struct Slot {
  union {
    uint8_t u8;
    int32_t i32;
    uint32_t u32;
    float f32;
    double f64;
    int32_t rat[2];  // numerator, denominator (normalised)
  };
  uint32_t str = 0;  // index into the thread's string pool (STR)
  uint8_t null = 0;
};

// A compiled program: writes every output element of one record.
struct Program {
  std::vector<Instr> code;
  std::vector<Slot> constants;
  std::vector<std::string> strings;  // string constants (a CONST_STR constant's str = index)
  int maxStack = 0;
};

// Record views the programs read and write.
struct RecordIn {
  const uint8_t* data;
  const uint8_t* nulls;  // one flag per flat element
};
struct RecordOut {
  uint8_t* data;
  uint8_t* nulls;
};

// The inputs of a block of k records. Record i is the whole input record
// recs[i] (nulls[i]), or, when `operands` lists the first input element of
// each operand record, those records in place: operand k of record i at
// recs[i * operands.size() + k].
// `reversed`, when given, by operand: w for a window of w 4-byte elements
// that lies as its producer's w records, oldest first (element j at
// (w-1-j)*4, its flag at w-1-j: jit::ChainStep::reversed), else 0.
struct BlockIn {
  const uint8_t* const* recs;
  const uint8_t* const* nulls;
  std::span<const int> operands;
  std::span<const int> reversed = {};
};
// k output records one after the other, and their NULL flags likewise.
using BlockOut = RecordOut;

// Lowers every field program of a compiled query (PUSH_IDs already local)
// into one program that computes the whole output record.
// Throws ir::CompileError when a program cannot be typed.
Program lowerFields(const ir::Query& q, const ir::Layout& in, const ir::Layout& out);

// Lowers a rule condition against the stream's output record; the program
// leaves INTEGER 1/0/NULL in output element 0 of a one-element scratch record.
Program lowerCondition(const ir::Query& q, const ir::Program& cond, const ir::Layout& outRecord);

// One line per instruction: index, opcode, operands by the opcode's mode;
// `meanings` appends the family's meaning.
std::string disassemble(const Program& p, bool meanings = false);
// Every stream's field program and rule conditions, lowered and disassembled.
std::string disassemble(const ir::Plan& plan);

// The interpreter, a block of records at a time: each instruction runs over
// every record of the block before the next one starts (a program is straight
// line code, so the stack has the same depth in every record), which pays the
// dispatch once a block rather than once a record. A Machine holds only its
// last error: the stack and the strings are the running thread's scratch, so
// machines are cheap (one per program) and a thread runs one at a time.
class Machine {
 public:
  // Returns false on a run-time error (message in error()).
  bool run(const Program& p, const ir::Layout& in, BlockIn src, const ir::Layout& out, BlockOut dst, int k);
  // One record.
  bool run(const Program& p, const ir::Layout& in, RecordIn src, const ir::Layout& out, RecordOut dst) {
    return run(p, in, BlockIn{&src.data, &src.nulls, {}}, out, dst, 1);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace vm
