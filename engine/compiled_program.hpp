// A field program or rule condition together with the code that runs it:
// native code from the JIT once it is compiled, else the VM's bytecode. The
// two agree byte for byte, so a program may switch between them at any block
// boundary. Streams and rules run their programs through this one type.
#pragma once

#include <cstdint>
#include <string>

#include "ir/layout.hpp"
#include "vm/vm.hpp"

namespace engine {

// The JIT's block-shaped function (jit::BlockFn): run k records whose input
// records (or operands read in place) and NULL flags are given by pointer.
using NativeFn = void (*)(const uint8_t* const* recs, const uint8_t* const* nulls, uint8_t* out, uint8_t* outNull,
                          int64_t k);

struct CompiledProgram {
  vm::Program bytecode;       // what the VM runs and the JIT compiles
  NativeFn native = nullptr;  // set when the JIT compiled `bytecode`
  vm::Machine machine;        // the VM's state (one per program: streams may run on several threads)

  // Runs k records of input layout `in` into consecutive records of `out`:
  // whole input records (recs[i], nulls[i]), or, when `operands` lists the
  // first input element of each operand record, the operands read in place
  // (recs[i * operands.size() + k]); native code was compiled for the same
  // form. False on a run-time error, with the message in error().
  bool run(const ir::Layout& in, const ir::Layout& out, const uint8_t* const* recs, const uint8_t* const* nulls,
           uint8_t* outRec, uint8_t* outNull, int k, std::span<const int> operands = {}) {
    if (native) {
      native(recs, nulls, outRec, outNull, k);
      return true;
    }
    return machine.run(bytecode, in, {recs, nulls, operands}, out, {outRec, outNull}, k);
  }
  std::string error() const { return machine.error(); }
};

}  // namespace engine
