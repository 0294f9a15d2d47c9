// The interpreter: one handler template per instruction family, the dispatch
// switch generated from the instruction table (opcodes.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "ir/functions.hpp"
#include "ir/semantics.hpp"
#include "ir/values.hpp"
#include "type_tags.hpp"
#include "vm.hpp"

namespace vm {

using ir::Type;
using namespace vm::tags;

// ================================================================ interpreter
// Handlers work on one record of the block, `lane`; the stack holds each
// depth's slots for every record side by side (depth d of lane i at
// st[d * kLanes + i]), and the dispatch moves `sp` once an instruction by the
// family's stack effect.
constexpr int kLanes = 256;

struct Exec {
  std::vector<std::string>& pool;  // the strings of the block's values
  const Program& p;
  const ir::Layout& in;
  BlockIn src;
  const ir::Layout& out;
  BlockOut dst;
  Slot* st;
  int sp = 0;             // number of values on the stack
  int lane = 0;           // the record of the block this handler call works on
  uint32_t poolUsed = 0;  // strings of pool in use by this block

  Slot& top(int depth = 0) { return st[(sp - 1 - depth) * kLanes + lane]; }
  Slot& push() { return st[sp * kLanes + lane]; }

  // Where the element of a LOAD or STORE lies, found once an instruction:
  // record pointer `rec` of each lane's `perLane`, byte offset, flag index.
  size_t perLane = 1, rec = 0, flag = 0;
  int offset = 0;
  int64_t outStride = 0;  // STORE: the output record's size, a copy the lanes' loop keeps in a register
  void locate(const Instr& ins, bool load) {
    if (!load) {
      perLane = out.elems.size(), flag = size_t(ins.a), offset = out.elems[size_t(ins.a)].offset;
      outStride = out.recordSize;
      return;
    }
    perLane = src.operands.empty() ? 1 : src.operands.size(), rec = 0;
    while (rec + 1 < perLane && src.operands[rec + 1] <= ins.a) ++rec;
    const int base = src.operands.empty() ? 0 : src.operands[rec];
    flag = size_t(ins.a - base);
    offset = in.elems[size_t(ins.a)].offset - (base ? in.elems[size_t(base)].offset : 0);
    if (rec < src.reversed.size() && src.reversed[rec])
      flag = size_t(src.reversed[rec] - 1) - flag, offset = int(4 * flag);
  }

  // ---------------------------------------------------------- strings
  uint32_t newStr() {
    if (poolUsed == pool.size()) pool.emplace_back();
    pool[poolUsed].clear();
    return poolUsed++;
  }
  std::string& str(const Slot& s) { return pool[s.str]; }
  uint32_t strOf(std::string_view v) {
    uint32_t i = newStr();
    pool[i].assign(v.data(), v.size());
    return i;
  }

  // ---------------------------------------------------------- families
  template <class T>
  void LOAD(const Instr& ins) {
    const ir::Element& e = in.elems[size_t(ins.a)];
    Slot& s = push();
    const size_t r = size_t(lane) * perLane + rec;
    s.null = src.nulls[r][flag];
    const uint8_t* d = src.recs[r] + offset;
    if constexpr (std::is_same_v<T, STR>) {
      size_t n = strnlen(reinterpret_cast<const char*>(d), size_t(e.size));
      s.str = strOf(std::string_view(reinterpret_cast<const char*>(d), n));
    } else if constexpr (std::is_same_v<T, RAT>) {
      memcpy(s.rat, d, 8);
    } else {
      typename T::C v;
      memcpy(&v, d, sizeof v);
      T::set(s, v);
    }
  }
  template <class T>
  void CONST(const Instr& ins) {
    Slot& s = push();
    s = p.constants[size_t(ins.a)];
    s.null = 0;
    if constexpr (std::is_same_v<T, STR>) s.str = strOf(p.strings[size_t(p.constants[size_t(ins.a)].str)]);
  }
  template <class T>
  void STORE(const Instr& ins) {
    Slot& s = top();
    dst.nulls[size_t(lane) * perLane + flag] = s.null;
    uint8_t* d = dst.data + int64_t(lane) * outStride + offset;
    if (s.null) {
      const ir::Element& e = out.elems[size_t(ins.a)];
      memset(d, 0, size_t(e.size));
      if constexpr (std::is_same_v<T, RAT>) {
        int32_t one = 1;
        memcpy(d + 4, &one, 4);
      }
      return;
    }
    if constexpr (std::is_same_v<T, STR>) {
      const ir::Element& e = out.elems[size_t(ins.a)];
      const std::string& v = str(s);
      size_t n = std::min(v.size(), size_t(e.size));
      memcpy(d, v.data(), n);
      memset(d + n, 0, size_t(e.size) - n);
    } else if constexpr (std::is_same_v<T, RAT>) {
      memcpy(d, s.rat, 8);
    } else {
      typename T::C v = ir::val::canonical(T::get(s));  // one NaN
      memcpy(d, &v, sizeof v);
    }
  }

  // ---------------------------------------------------------- conversions
  template <class To>
  void fromDouble(Slot& s, double d) {
    To::set(s, ir::val::convert<typename To::C>(d));
  }
  // A string's longest numeric prefix as To; false when there is none.
  template <class To>
  bool parse(Slot& s, const std::string& v) {
    if constexpr (std::is_same_v<To, F32> || std::is_same_v<To, F64>) {
      double d;
      if (!ir::val::parseDoublePrefix(v, d)) return false;
      fromDouble<To>(s, d);
    } else if constexpr (std::is_same_v<To, RAT>) {
      ir::val::Rat r;
      if (!ir::val::parseRational(v, r)) return false;
      RAT::set(s, r);
    } else {
      int32_t i;
      if (!ir::val::parseIntPrefix(v, i)) return false;
      To::set(s, ir::val::convert<typename To::C>(i));
    }
    return true;
  }
  template <class PairT>
  void CVT(const Instr& ins) {
    using From = typename PairT::From;
    using To = typename PairT::To;
    Slot& s = top(ins.a);
    if (s.null) return;  // NULL stays NULL
    if constexpr (std::is_same_v<From, STR>) {
      // Explicit conversions give NULL; an implicit store gives 0 (not NULL).
      if (!parse<To>(s, std::string(str(s)))) {
        if (ins.b) s.null = 1;
        else fromDouble<To>(s, 0.0);
      }
    } else if constexpr (std::is_same_v<To, STR>) {
      if constexpr (std::is_same_v<From, F32> || std::is_same_v<From, F64>)
        s.str = strOf(ir::val::fmtFixed(double(From::get(s))));
      else if constexpr (std::is_same_v<From, RAT>) s.str = strOf(ir::val::fmtRat(RAT::get(s)));
      else s.str = strOf(std::to_string(From::get(s)));
    } else {
      To::set(s, ir::val::convert<typename To::C>(From::get(s)));
    }
  }

  // ---------------------------------------------------------- arithmetic
  template <class T, class F>
  void arith(F f) {
    Slot& a = top(0);
    Slot& b = top(1);
    if (a.null || b.null) {
      b.null = 1;
      return;
    }
    f(b, a);
  }
  template <class T>
  void ADD(const Instr&) {
    if constexpr (std::is_same_v<T, STR>) arith<T>([&](Slot& b, Slot& a) { b.str = strOf(str(b) + str(a)); });
    else arith<T>([](Slot& b, Slot& a) { T::set(b, ir::val::add(T::get(b), T::get(a))); });
  }
  template <class T>
  void SUB(const Instr&) {
    arith<T>([](Slot& b, Slot& a) { T::set(b, ir::val::sub(T::get(b), T::get(a))); });
  }
  template <class T>
  void MUL(const Instr&) {
    arith<T>([](Slot& b, Slot& a) { T::set(b, ir::val::mul(T::get(b), T::get(a))); });
  }
  template <class T>
  void DIV(const Instr&) {
    arith<T>([](Slot& b, Slot& a) {
      typename T::C r;
      if (ir::val::div(T::get(b), T::get(a), r)) T::set(b, r);
      else b.null = 1;  // division by zero gives NULL
    });
  }
  template <class T>
  void POW(const Instr&) {
    arith<T>([](Slot& b, Slot& a) {
      typename T::C r;
      if (ir::val::pow(T::get(b), T::get(a), r)) T::set(b, r);
      else b.null = 1;
    });
  }
  template <class T>
  void NEG(const Instr&) {
    Slot& s = top();
    if (!s.null) T::set(s, ir::val::neg(T::get(s)));
  }

  // ---------------------------------------------------------- comparisons
  template <class T>
  int compare(const Slot& b, const Slot& a) {
    if constexpr (std::is_same_v<T, STR>) {
      int c = str(b).compare(str(a));
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    } else if constexpr (std::is_same_v<T, RAT>) {
      return ir::val::ratCmp(RAT::get(b), RAT::get(a));
    } else {
      auto x = T::get(b), y = T::get(a);
      if constexpr (std::is_floating_point_v<typename T::C>)
        if (std::isnan(x) || std::isnan(y)) return 2;  // unordered: only != holds
      return x < y ? -1 : (y < x ? 1 : 0);
    }
  }
  template <class T>
  void setBool(Slot& s, bool v) {
    if constexpr (std::is_same_v<T, STR>) s.i32 = v ? 1 : 0;  // INTEGER, as inference types it
    else if constexpr (std::is_same_v<T, RAT>) RAT::set(s, ir::val::Rat{v ? 1 : 0, 1});
    else T::set(s, typename T::C(v ? 1 : 0));
  }
  template <class T, class Pred>
  void cmp(Pred pred) {
    Slot& a = top(0);
    Slot& b = top(1);
    if (a.null || b.null) {
      b.null = 1;
      return;
    }
    setBool<T>(b, pred(compare<T>(b, a)));
  }
  template <class T>
  void EQ(const Instr&) {
    cmp<T>([](int c) { return c == 0; });
  }
  template <class T>
  void NE(const Instr&) {
    cmp<T>([](int c) { return c != 0; });
  }
  template <class T>
  void LT(const Instr&) {
    cmp<T>([](int c) { return c == -1; });
  }
  template <class T>
  void GT(const Instr&) {
    cmp<T>([](int c) { return c == 1; });
  }
  template <class T>
  void LE(const Instr&) {
    cmp<T>([](int c) { return c == -1 || c == 0; });
  }
  template <class T>
  void GE(const Instr&) {
    cmp<T>([](int c) { return c == 1 || c == 0; });
  }

  // ---------------------------------------------------------- logic
  template <class T>
  void TRUTH(const Instr& ins) {
    Slot& s = top(ins.a);
    if (s.null) return;
    bool v;
    if constexpr (std::is_same_v<T, STR>) v = !str(s).empty();
    else if constexpr (std::is_same_v<T, RAT>) v = s.rat[0] != 0;
    else v = T::get(s) != 0;
    s.i32 = v ? 1 : 0;
  }
  // Three-valued AND (dominant 0) and OR (dominant 1) over INTEGER truth values.
  void kleene(bool dominant) {
    Slot& a = top(0);
    Slot& b = top(1);
    auto decides = [&](const Slot& s) { return !s.null && (s.i32 != 0) == dominant; };
    if (decides(a) || decides(b)) {
      b.null = 0;
      b.i32 = dominant ? 1 : 0;
    } else if (a.null || b.null) {
      b.null = 1;
    } else {
      b.i32 = dominant ? 0 : 1;
    }
  }
  template <class T>
  void AND(const Instr&) {
    kleene(false);
  }
  template <class T>
  void OR(const Instr&) {
    kleene(true);
  }
  template <class T>
  void NOT(const Instr&) {
    Slot& s = top();
    if (!s.null) s.i32 = s.i32 ? 0 : 1;
  }

  // ---------------------------------------------------------- functions
  template <class T>
  void MATH(const Instr& ins) {
    Slot& s = top();
    if (s.null) return;
    fromDouble<T>(s, ir::functionById(ins.a).math(ir::val::convert<double>(T::get(s))));
  }
  template <class T>
  void MATHD(const Instr& ins) {
    Slot& s = top();
    if (s.null) return;
    double r = ir::functionById(ins.a).math(s.f64);
    if (!std::isfinite(r)) s.null = 1;
    else s.f64 = r;
  }
  template <class T>
  void ABS(const Instr&) {
    Slot& s = top();
    if (!s.null) T::set(s, ir::val::abs(T::get(s)));
  }
  template <class T>
  void ISNULL(const Instr&) {
    Slot& s = top();
    s.i32 = s.null ? 1 : 0;
    s.null = 0;
  }
  template <class T>
  void NULL2ZERO(const Instr&) {
    Slot& s = top();
    if (!s.null) return;
    s.null = 0;
    if constexpr (std::is_same_v<T, STR>) s.str = strOf("0");
    else if constexpr (std::is_same_v<T, RAT>) RAT::set(s, ir::val::Rat{0, 1});
    else T::set(s, typename T::C(0));
  }
  template <class T>
  void LENGTH(const Instr&) {
    Slot& s = top();
    if (s.null) return;
    s.i32 = int32_t(str(s).size());
  }
  // ---------------------------------------------------------- fused
  // LOAD_I32 b, LOAD_I32 a, ADD/SUB/MUL_I32, STORE_I32 (a SELECT's b[i] * a[i]):
  // the four instructions' work in one loop over the lanes, the stack
  // untouched (it is left as the four leave it: as it was). Same values, NULL
  // flags and bytes as the four handlers. False: `c` does not start one.
  bool loadsOpStore(const Instr* c, int lanes) {
    if (c[1].op != Op::LOAD_I32 || c[3].op != Op::STORE_I32) return false;
    const Op op = c[2].op;
    if (op == Op::ADD_I32) return loadsOpStore(c, lanes, [](int32_t b, int32_t a) { return ir::val::add(b, a); });
    if (op == Op::SUB_I32) return loadsOpStore(c, lanes, [](int32_t b, int32_t a) { return ir::val::sub(b, a); });
    if (op == Op::MUL_I32) return loadsOpStore(c, lanes, [](int32_t b, int32_t a) { return ir::val::mul(b, a); });
    return false;
  }
  template <class F>
  bool loadsOpStore(const Instr* c, int lanes, F f) {
    locate(c[0], true);
    const size_t in = perLane, rb = rec, fb = flag;
    const int ob = offset;
    locate(c[1], true);
    const size_t ra = rec, fa = flag;
    const int oa = offset;
    locate(c[3], false);
    const size_t outPer = perLane, fo = flag;
    const int64_t stride = outStride;
    const uint8_t *const *recs = src.recs, *const *nulls = src.nulls;
    uint8_t *data = dst.data + offset, *outNulls = dst.nulls + fo;
    for (int i = 0; i < lanes; ++i) {
      const size_t r = size_t(i) * in;
      const uint8_t isNull = (nulls[r + rb][fb] | nulls[r + ra][fa]) != 0;  // 1, as the handlers set it
      outNulls[size_t(i) * outPer] = isNull;
      int32_t b = 0, a = 0, v = 0;
      if (!isNull) {
        memcpy(&b, recs[r + rb] + ob, 4);
        memcpy(&a, recs[r + ra] + oa, 4);
        v = ir::val::canonical(f(b, a));
      }
      memcpy(data + int64_t(i) * stride, &v, 4);
    }
    return true;
  }
};

bool Machine::run(const Program& p, const ir::Layout& in, BlockIn src, const ir::Layout& out, BlockOut dst, int k) {
  // Scratch shared by a thread's machines (a plan has many, and a run never
  // nests): one column of kLanes slots per stack depth, and the strings.
  thread_local std::vector<Slot> stack;
  thread_local std::vector<std::string> pool;
  if (stack.size() < size_t(p.maxStack + 1) * kLanes) stack.resize(size_t(p.maxStack + 1) * kLanes);
  const size_t perRecord = src.operands.empty() ? 1 : src.operands.size();
  for (int first = 0; first < k; first += kLanes) {
    const int lanes = std::min(kLanes, k - first);
    Exec x{pool,
           p,
           in,
           {src.recs + size_t(first) * perRecord, src.nulls + size_t(first) * perRecord, src.operands, src.reversed},
           out,
           {dst.data + int64_t(first) * out.recordSize, dst.nulls + size_t(first) * out.elems.size()},
           stack.data()};
    for (size_t pc = 0; pc < p.code.size(); ++pc) {
      const Instr& ins = p.code[pc];
      if (ins.op == Op::LOAD_I32 && pc + 3 < p.code.size() && x.loadsOpStore(&ins, lanes)) {
        pc += 3;
        continue;
      }
      switch (ins.op) {
#define VM_CASE(name, family, tag, from, to)                                                          \
  case Op::name: {                                                                                    \
    if constexpr (opMode(Op::name) == Mode::ELEM) x.locate(ins, std::string_view(#family) == "LOAD"); \
    Exec y = x; /* the lanes' loop on a copy the values' stores cannot alias: its fields stay in      \
                   registers */                                                                       \
    for (y.lane = 0; y.lane < lanes; ++y.lane) y.family<tag>(ins);                                    \
    x.poolUsed = y.poolUsed;                                                                          \
    x.sp += opStack(Op::name);                                                                        \
    break;                                                                                            \
  }
        VM_OPCODES(VM_CASE)
#undef VM_CASE
        default: error_ = "bad instruction"; return false;
      }
    }
  }
  return true;
}

}  // namespace vm
