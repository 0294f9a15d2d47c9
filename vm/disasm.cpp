// The disassembler: each instruction's name and operands as its table row's
// operand mode says, optionally with the family's meaning; a plan's streams.
#include <algorithm>
#include <cstdio>

#include "ir/functions.hpp"
#include "ir/passes/passes.hpp"
#include "ir/values.hpp"
#include "vm.hpp"

namespace vm {

namespace {

// A constant's value in its opcode's type.
std::string constantText(const Program& p, const Instr& in) {
  const Slot& c = p.constants[size_t(in.a)];
  switch (kOps[int(in.op)].from) {
    case Tag::U8: return std::to_string(c.u8);
    case Tag::I32: return std::to_string(c.i32);
    case Tag::U32: return std::to_string(c.u32);
    case Tag::RAT: return ir::val::fmtRat({c.rat[0], c.rat[1]});
    case Tag::F32: return ir::val::fmtFixed(double(c.f32));
    case Tag::F64: return ir::val::fmtFixed(c.f64);
    case Tag::STR: return "'" + p.strings[size_t(c.str)] + "'";
    case Tag::ANY: break;
  }
  return "?";
}

std::string operands(const Program& p, const Instr& in) {
  switch (opMode(in.op)) {
    case Mode::NONE: return "";
    case Mode::ELEM: return " e" + std::to_string(in.a);
    case Mode::CONST: return " #" + std::to_string(in.a) + " " + constantText(p, in);
    case Mode::DEPTH: return " depth=" + std::to_string(in.a);
    case Mode::CONV: return " depth=" + std::to_string(in.a) + (in.b ? " explicit" : "");
    case Mode::FN:
      if (in.a >= 0 && in.a < ir::functionCount()) return std::string(" fn=") + ir::functionById(in.a).name;
      return " fn=" + std::to_string(in.a);
  }
  return "";
}

}  // namespace

std::string disassemble(const Program& p, bool meanings) {
  std::string s;
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    char buf[64];
    snprintf(buf, sizeof buf, "%4zu  %-14s", i, opName(in.op));
    std::string line = buf + operands(p, in);
    if (meanings) {
      line.resize(std::max<size_t>(line.size(), 40), ' ');
      line += std::string("  ; ") + opMeaning(in.op);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s += line + "\n";
  }
  return s;
}

std::string disassemble(const ir::Plan& plan) {
  std::string s;
  for (const ir::Query& q : plan.queries) {
    if (q.isDirective() || q.isDeclaration()) continue;
    const ir::Layout out = ir::Layout::of(q.schema);
    try {
      s +=
          "stream " + q.id + ":\n" + disassemble(lowerFields(q, ir::Layout::of(ir::passes::inputRecord(plan, q)), out));
      for (const ir::Rule& r : q.rules)
        s += "rule " + r.name + ":\n" + disassemble(lowerCondition(q, r.condition, out));
    } catch (const ir::CompileError& e) {
      s += std::string("  (no bytecode: ") + e.what() + ")\n";
    }
  }
  return s;
}

}  // namespace vm
