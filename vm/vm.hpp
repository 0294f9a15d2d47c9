// Field-program VM: each field program of the plan lowered to typed stack
// bytecode (the instruction table, vm/opcodes.hpp). Operands are element
// indices resolved at plan time; evaluation allocates nothing per record
// (strings reuse a pool).
#pragma once

#include <cstdint>
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
  uint32_t str = 0;  // index into the machine's string pool (STR)
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

// The interpreter. One Machine per thread; run() is re-entrant per Machine.
class Machine {
 public:
  // Returns false on a run-time error (message in error()).
  bool run(const Program& p, const ir::Layout& in, RecordIn src, const ir::Layout& out, RecordOut dst);
  const std::string& error() const { return error_; }

 private:
  std::vector<Slot> stack_;
  std::vector<std::string> pool_;
  uint32_t poolUsed_ = 0;
  std::string error_;
  friend struct Exec;
};

}  // namespace vm
