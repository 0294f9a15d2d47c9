// Lowering of one VM program to LLVM IR: one template per instruction family,
// the dispatch switch generated from the instruction table (vm/opcodes.hpp).
#include <llvm/IR/Intrinsics.h>

#include "ir/values.hpp"
#include "lower.hpp"
#include "vm/type_tags.hpp"

namespace jit {

using ir::Type;
using llvm::IRBuilder;
using llvm::Value;

namespace {

using namespace vm::tags;  // the opcode table's operand types

// A value on the compile-time stack: SSA registers instead of VM slots.
struct SV {
  Type t;
  Value* v = nullptr;     // value (RATIONAL: numerator)
  Value* den = nullptr;   // RATIONAL denominator
  Value* null = nullptr;  // i1
};

// Lowers one VM program into the body of one function.
struct Lowering {
  llvm::LLVMContext& C;
  llvm::Module& M;
  IRBuilder<>& B;
  const vm::Program& p;
  const ir::Layout& in;
  const ir::Layout& out;
  Frame& fr;
  std::vector<SV> st;

  size_t operandOf(int e) const {
    size_t k = 0;
    while (k + 1 < fr.opBase.size() && fr.opBase[k + 1] <= e) ++k;
    return k;
  }

  llvm::Type* ty(Type t) {
    switch (t) {
      case Type::BYTE: return B.getInt8Ty();
      case Type::INTEGER:
      case Type::UINT:
      case Type::RATIONAL: return B.getInt32Ty();
      case Type::FLOAT: return B.getFloatTy();
      case Type::DOUBLE: return B.getDoubleTy();
      default: throw Unsupported("string values");
    }
  }
  llvm::FunctionCallee helper(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args) {
    return M.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
  }
  // A helper whose result a NULL throws away is not called for it: the VM
  // skips NULL operands, and a helper may count a rounding (ratRounded) that
  // the VM would not. The result of the skipped call is 0.
  Value* callUnlessNull(Value* isNull, llvm::FunctionCallee f, std::vector<Value*> args) {
    llvm::Function* fn = B.GetInsertBlock()->getParent();
    llvm::BasicBlock* from = B.GetInsertBlock();
    auto* call = llvm::BasicBlock::Create(C, "call", fn);
    auto* join = llvm::BasicBlock::Create(C, "join", fn);
    B.CreateCondBr(isNull, join, call);
    B.SetInsertPoint(call);
    Value* r = B.CreateCall(f, args);
    B.CreateBr(join);
    B.SetInsertPoint(join);
    llvm::PHINode* phi = B.CreatePHI(r->getType(), 2);
    phi->addIncoming(llvm::Constant::getNullValue(r->getType()), from);
    phi->addIncoming(r, call);
    return phi;
  }
  Value* ratCall(const char* name, const SV& a, const SV& b, Value* isNull) {
    auto i32 = B.getInt32Ty();
    return callUnlessNull(isNull, helper(name, B.getInt64Ty(), {i32, i32, i32, i32}), {a.v, a.den, b.v, b.den});
  }
  void unpackRat(Value* packed, SV& r) {
    r.v = B.CreateTrunc(packed, B.getInt32Ty());
    r.den = B.CreateTrunc(B.CreateLShr(packed, 32), B.getInt32Ty());
  }
  SV& top(int depth = 0) { return st[st.size() - 1 - size_t(depth)]; }
  Value* anyNull(const SV& a, const SV& b) { return B.CreateOr(a.null, b.null); }

  Value* toDouble(const SV& s) {
    switch (s.t) {
      case Type::BYTE: return B.CreateUIToFP(s.v, B.getDoubleTy());
      case Type::INTEGER: return B.CreateSIToFP(s.v, B.getDoubleTy());
      case Type::UINT: return B.CreateUIToFP(s.v, B.getDoubleTy());
      case Type::FLOAT: return B.CreateFPExt(s.v, B.getDoubleTy());
      case Type::DOUBLE: return s.v;
      case Type::RATIONAL:
        return B.CreateFDiv(B.CreateSIToFP(s.v, B.getDoubleTy()), B.CreateSIToFP(s.den, B.getDoubleTy()));
      default: throw Unsupported("string values");
    }
  }
  // The VM's fromDouble: cast a double back to type t.
  void fromDouble(SV& s, Value* d, Type t) {
    auto dbl = B.getDoubleTy();
    s.t = t;
    s.den = nullptr;
    switch (t) {
      case Type::BYTE:
        s.v = B.CreateTrunc(B.CreateCall(helper("rdb_f2u8", B.getInt32Ty(), {dbl}), {d}), B.getInt8Ty());
        break;
      case Type::INTEGER: s.v = B.CreateCall(helper("rdb_f2i32", B.getInt32Ty(), {dbl}), {d}); break;
      case Type::UINT: s.v = B.CreateCall(helper("rdb_f2u32", B.getInt32Ty(), {dbl}), {d}); break;
      case Type::FLOAT: s.v = B.CreateFPTrunc(d, B.getFloatTy()); break;
      case Type::DOUBLE: s.v = d; break;
      case Type::RATIONAL:
        unpackRat(callUnlessNull(s.null, helper("rdb_rationalize", B.getInt64Ty(), {dbl}), {d}), s);
        break;
      default: throw Unsupported("string values");
    }
  }
  Value* isZero(const SV& s) {
    switch (s.t) {
      case Type::FLOAT:
      case Type::DOUBLE: return B.CreateFCmpOEQ(s.v, llvm::ConstantFP::get(s.v->getType(), 0.0));
      default: return B.CreateICmpEQ(s.v, llvm::ConstantInt::get(s.v->getType(), 0));
    }
  }

  // ---------------------------------------------------------- families
  template <class T>
  void LOAD(const vm::Instr& ins) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string values");
    else {
      const ir::Element& e = in.elems[size_t(ins.a)];
      SV s{T::T};
      const size_t k = operandOf(ins.a);
      const int reversed = k < fr.opReversed.size() ? fr.opReversed[k] : 0;
      const unsigned at = reversed ? unsigned(reversed - 1 - (ins.a - fr.opBase[k])) : unsigned(ins.a - fr.opBase[k]);
      Value* ptr =
          B.CreateConstGEP1_32(B.getInt8Ty(), fr.opData[k], reversed ? 4 * at : unsigned(e.offset - fr.opOff[k]));
      if constexpr (std::is_same_v<T, RAT>) {
        s.v = B.CreateAlignedLoad(B.getInt32Ty(), ptr, llvm::MaybeAlign(1));
        s.den = B.CreateAlignedLoad(B.getInt32Ty(), B.CreateConstGEP1_32(B.getInt8Ty(), ptr, 4), llvm::MaybeAlign(1));
      } else {
        s.v = B.CreateAlignedLoad(ty(T::T), ptr, llvm::MaybeAlign(1));
      }
      Value* n = B.CreateLoad(B.getInt8Ty(), B.CreateConstGEP1_32(B.getInt8Ty(), fr.opNull[k], at));
      s.null = B.CreateICmpNE(n, B.getInt8(0));
      st.push_back(s);
    }
  }
  template <class T>
  void CONST(const vm::Instr& ins) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string values");
    else {
      const vm::Slot& c = p.constants[size_t(ins.a)];
      SV s{T::T};
      s.null = B.getFalse();
      if constexpr (std::is_same_v<T, U8>) s.v = B.getInt8(c.u8);
      else if constexpr (std::is_same_v<T, I32>) s.v = B.getInt32(uint32_t(c.i32));
      else if constexpr (std::is_same_v<T, U32>) s.v = B.getInt32(c.u32);
      else if constexpr (std::is_same_v<T, F32>) s.v = llvm::ConstantFP::get(B.getFloatTy(), double(c.f32));
      else if constexpr (std::is_same_v<T, F64>) s.v = llvm::ConstantFP::get(B.getDoubleTy(), c.f64);
      else {
        s.v = B.getInt32(uint32_t(c.rat[0]));
        s.den = B.getInt32(uint32_t(c.rat[1]));
      }
      st.push_back(s);
    }
  }
  template <class T>
  void STORE(const vm::Instr& ins) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string values");
    else {
      SV s = st.back();
      st.pop_back();
      const ir::Element& e = out.elems[size_t(ins.a)];
      Value* ptr = B.CreateConstGEP1_32(B.getInt8Ty(), fr.outData, unsigned(e.offset));
      B.CreateStore(B.CreateZExt(s.null, B.getInt8Ty()),
                    B.CreateConstGEP1_32(B.getInt8Ty(), fr.outNulls, unsigned(ins.a)));
      // A NULL field holds its type's zero (0/1 for RATIONAL).
      Value* zero = llvm::Constant::getNullValue(s.v->getType());
      Value* v = s.v;
      if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>)  // one canonical NaN, as the VM stores
        v = B.CreateSelect(B.CreateFCmpUNO(v, v), llvm::ConstantFP::getNaN(v->getType()), v);
      B.CreateAlignedStore(B.CreateSelect(s.null, zero, v), ptr, llvm::MaybeAlign(1));
      if constexpr (std::is_same_v<T, RAT>)
        B.CreateAlignedStore(B.CreateSelect(s.null, B.getInt32(1), s.den), B.CreateConstGEP1_32(B.getInt8Ty(), ptr, 4),
                             llvm::MaybeAlign(1));
    }
  }
  template <class PairT>
  void CVT(const vm::Instr& ins) {
    using From = typename PairT::From;
    using To = typename PairT::To;
    if constexpr (std::is_same_v<From, STR> || std::is_same_v<To, STR>) throw Unsupported("string conversions");
    else {
      SV& s = top(ins.a);
      SV r{To::T};
      r.null = s.null;
      constexpr Type f = From::T, t = To::T;
      auto isInt = [](Type x) { return x == Type::BYTE || x == Type::INTEGER || x == Type::UINT; };
      if constexpr (f == Type::FLOAT || f == Type::DOUBLE) {
        if constexpr (t == Type::FLOAT) r.v = B.CreateFPTrunc(s.v, B.getFloatTy());
        else if constexpr (t == Type::DOUBLE) r.v = B.CreateFPExt(s.v, B.getDoubleTy());
        else fromDouble(r, toDouble(s), t);
      } else if constexpr (f == Type::RATIONAL) {
        if constexpr (t == Type::FLOAT)
          r.v = B.CreateFDiv(B.CreateSIToFP(s.v, B.getFloatTy()), B.CreateSIToFP(s.den, B.getFloatTy()));
        else if constexpr (t == Type::DOUBLE) r.v = toDouble(s);
        else {
          // num / den truncated; the denominator of a NULL may be garbage: keep it non-zero.
          Value* den = B.CreateSelect(B.CreateICmpEQ(s.den, B.getInt32(0)), B.getInt32(1), s.den);
          Value* safe = B.CreateSelect(
              B.CreateAnd(B.CreateICmpEQ(s.v, B.getInt32(0x80000000u)), B.CreateICmpEQ(den, B.getInt32(0xffffffffu))),
              B.getInt32(1), den);
          Value* q = B.CreateSDiv(s.v, safe);
          r.v = t == Type::BYTE ? B.CreateTrunc(q, B.getInt8Ty()) : q;
        }
      } else if constexpr (t == Type::RATIONAL) {
        if constexpr (f == Type::BYTE) {
          r.v = B.CreateZExt(s.v, B.getInt32Ty());
          r.den = B.getInt32(1);
        } else {  // INT32_MIN and UINT above 2^31-1 saturate (and count): ir::val::ratFromInt
          Value* w = f == Type::UINT ? B.CreateZExt(s.v, B.getInt64Ty()) : B.CreateSExt(s.v, B.getInt64Ty());
          unpackRat(callUnlessNull(s.null, helper("rdb_rat_from_int", B.getInt64Ty(), {B.getInt64Ty()}), {w}), r);
        }
      } else if constexpr (t == Type::FLOAT || t == Type::DOUBLE) {
        llvm::Type* d = ty(t);
        r.v = f == Type::INTEGER ? B.CreateSIToFP(s.v, d) : B.CreateUIToFP(s.v, d);
      } else {
        static_assert(true);
        (void)isInt;
        // integer to integer: the C++ static_cast
        if constexpr (t == Type::BYTE) r.v = B.CreateTrunc(s.v, B.getInt8Ty());
        else if constexpr (f == Type::BYTE) r.v = B.CreateZExt(s.v, B.getInt32Ty());
        else r.v = s.v;  // INTEGER <-> UINT keep their bits
      }
      s = r;
    }
  }
  template <class T, class F>
  void binary(F f) {
    SV b = st.back();
    st.pop_back();
    SV a = st.back();
    st.pop_back();
    SV r{T::T};
    r.null = anyNull(a, b);
    f(a, b, r);
    st.push_back(r);
  }
  // b op a: RATIONAL through its runtime helper, floats and integers inline
  // (integers wrap: plain two's-complement instructions).
  template <class T>
  void arith(const char* ratHelper, llvm::Instruction::BinaryOps floatOp, llvm::Instruction::BinaryOps intOp) {
    if constexpr (std::is_same_v<T, RAT>)
      binary<T>([&](SV& a, SV& b, SV& r) { unpackRat(ratCall(ratHelper, a, b, r.null), r); });
    else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>)
      binary<T>([&](SV& a, SV& b, SV& r) { r.v = B.CreateBinOp(floatOp, a.v, b.v); });
    else binary<T>([&](SV& a, SV& b, SV& r) { r.v = B.CreateBinOp(intOp, a.v, b.v); });
  }
  template <class T>
  void ADD(const vm::Instr&) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string concatenation");
    else arith<T>("rdb_rat_add", llvm::Instruction::FAdd, llvm::Instruction::Add);
  }
  template <class T>
  void SUB(const vm::Instr&) {
    arith<T>("rdb_rat_sub", llvm::Instruction::FSub, llvm::Instruction::Sub);
  }
  template <class T>
  void MUL(const vm::Instr&) {
    arith<T>("rdb_rat_mul", llvm::Instruction::FMul, llvm::Instruction::Mul);
  }
  template <class T>
  void DIV(const vm::Instr&) {
    binary<T>([&](SV& a, SV& b, SV& r) {
      Value* zero = isZero(b);
      r.null = B.CreateOr(r.null, zero);  // division by zero gives NULL
      if constexpr (std::is_same_v<T, RAT>) {
        unpackRat(ratCall("rdb_rat_div", a, b, r.null), r);
      } else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
        r.v = B.CreateFDiv(a.v, b.v);
      } else if constexpr (std::is_same_v<T, I32>) {
        Value* ovf =
            B.CreateAnd(B.CreateICmpEQ(a.v, B.getInt32(0x80000000u)), B.CreateICmpEQ(b.v, B.getInt32(0xffffffffu)));
        Value* safe = B.CreateSelect(B.CreateOr(zero, ovf), B.getInt32(1), b.v);
        r.v = B.CreateSelect(ovf, B.getInt32(0x80000000u), B.CreateSDiv(a.v, safe));
      } else {
        Value* safe = B.CreateSelect(zero, llvm::ConstantInt::get(b.v->getType(), 1), b.v);
        r.v = B.CreateUDiv(a.v, safe);
      }
    });
  }
  template <class T>
  void POW(const vm::Instr&) {
    binary<T>([&](SV& a, SV& b, SV& r) {
      auto i32 = B.getInt32Ty(), i64 = B.getInt64Ty();
      if constexpr (std::is_same_v<T, RAT>) {
        unpackRat(ratCall("rdb_pow_rat", a, b, r.null), r);
        r.null = B.CreateOr(r.null, B.CreateICmpEQ(r.den, B.getInt32(0)));
      } else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
        const bool f = std::is_same_v<T, F32>;
        llvm::Type* ft = f ? B.getFloatTy() : B.getDoubleTy();
        r.v = B.CreateCall(helper(f ? "rdb_pow_f32" : "rdb_pow_f64", ft, {ft, ft}), {a.v, b.v});
        r.null = B.CreateOr(r.null, B.CreateFCmpUNO(r.v, r.v));
      } else {
        const bool u = std::is_same_v<T, U32>;
        Value* w = B.CreateCall(helper(u ? "rdb_pow_u32" : "rdb_pow_i32", i64, {i32, i32}), {a.v, b.v});
        r.v = B.CreateTrunc(w, i32);
        r.null = B.CreateOr(r.null, B.CreateICmpNE(B.CreateLShr(w, 32), B.getInt64(0)));
      }
    });
  }
  template <class T>
  void NEG(const vm::Instr&) {
    SV& s = top();
    if constexpr (std::is_same_v<T, U8> || std::is_same_v<T, U32>) s.v = B.CreateNot(s.v);
    else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) s.v = B.CreateFNeg(s.v);
    else s.v = B.CreateNeg(s.v);  // INTEGER, RATIONAL numerator
  }
  // Comparisons give 1 or 0 in the operand type.
  template <class T>
  void boolIn(SV& r, Value* bit) {
    if constexpr (std::is_same_v<T, RAT>) {
      r.v = B.CreateZExt(bit, B.getInt32Ty());
      r.den = B.getInt32(1);
    } else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
      r.v = B.CreateUIToFP(bit, ty(T::T));
    } else {
      r.v = B.CreateZExt(bit, ty(T::T));
    }
  }
  template <class T>
  void cmp(llvm::CmpInst::Predicate ip, llvm::CmpInst::Predicate up, llvm::CmpInst::Predicate fp, int ratSign,
           bool ratEq) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string comparison");
    else
      binary<T>([&](SV& a, SV& b, SV& r) {
        Value* bit;
        if constexpr (std::is_same_v<T, RAT>) {
          auto i32 = B.getInt32Ty();
          Value* c = B.CreateCall(helper("rdb_rat_cmp", i32, {i32, i32, i32, i32}), {a.v, a.den, b.v, b.den});
          // ratSign: the sign that makes it true; ratEq: whether 0 makes it true too; 2 = !=
          if (ratSign == 2) bit = B.CreateICmpNE(c, B.getInt32(0));
          else if (ratSign == 0) bit = B.CreateICmpEQ(c, B.getInt32(0));
          else {
            bit = B.CreateICmpEQ(c, B.getInt32(uint32_t(ratSign)));
            if (ratEq) bit = B.CreateOr(bit, B.CreateICmpEQ(c, B.getInt32(0)));
          }
        } else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
          bit = B.CreateFCmp(fp, a.v, b.v);
        } else if constexpr (std::is_same_v<T, I32>) {
          bit = B.CreateICmp(ip, a.v, b.v);
        } else {
          bit = B.CreateICmp(up, a.v, b.v);
        }
        boolIn<T>(r, bit);
      });
  }
  using P = llvm::CmpInst::Predicate;
  template <class T>
  void EQ(const vm::Instr&) {
    cmp<T>(P::ICMP_EQ, P::ICMP_EQ, P::FCMP_OEQ, 0, false);
  }
  template <class T>
  void NE(const vm::Instr&) {
    cmp<T>(P::ICMP_NE, P::ICMP_NE, P::FCMP_UNE, 2, false);
  }
  template <class T>
  void LT(const vm::Instr&) {
    cmp<T>(P::ICMP_SLT, P::ICMP_ULT, P::FCMP_OLT, -1, false);
  }
  template <class T>
  void GT(const vm::Instr&) {
    cmp<T>(P::ICMP_SGT, P::ICMP_UGT, P::FCMP_OGT, 1, false);
  }
  template <class T>
  void LE(const vm::Instr&) {
    cmp<T>(P::ICMP_SLE, P::ICMP_ULE, P::FCMP_OLE, -1, true);
  }
  template <class T>
  void GE(const vm::Instr&) {
    cmp<T>(P::ICMP_SGE, P::ICMP_UGE, P::FCMP_OGE, 1, true);
  }

  template <class T>
  void TRUTH(const vm::Instr& ins) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string truth");
    else {
      SV& s = top(ins.a);
      Value* bit;
      if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>)
        bit = B.CreateFCmpUNE(s.v, llvm::ConstantFP::get(s.v->getType(), 0.0));  // NaN is true
      else bit = B.CreateICmpNE(s.v, llvm::ConstantInt::get(s.v->getType(), 0));
      s.t = Type::INTEGER;
      s.v = B.CreateZExt(bit, B.getInt32Ty());
      s.den = nullptr;
    }
  }
  // Three-valued AND (dominant 0) and OR (dominant 1), as the VM's kleene().
  void kleene(bool dominant) {
    SV b = st.back();
    st.pop_back();
    SV& a = top();
    auto decides = [&](const SV& s) {
      Value* bit = dominant ? B.CreateICmpNE(s.v, B.getInt32(0)) : B.CreateICmpEQ(s.v, B.getInt32(0));
      return B.CreateAnd(B.CreateNot(s.null), bit);
    };
    Value* da = decides(a);
    Value* db = decides(b);
    Value* decided = B.CreateOr(da, db);
    a.null = B.CreateAnd(B.CreateNot(decided), B.CreateOr(a.null, b.null));
    a.v = B.CreateZExt(dominant ? decided : B.CreateNot(decided), B.getInt32Ty());
  }
  template <class T>
  void AND(const vm::Instr&) {
    kleene(false);
  }
  template <class T>
  void OR(const vm::Instr&) {
    kleene(true);
  }
  template <class T>
  void NOT(const vm::Instr&) {
    SV& s = top();
    s.v = B.CreateZExt(B.CreateICmpEQ(s.v, B.getInt32(0)), B.getInt32Ty());
  }
  template <class T>
  void MATH(const vm::Instr& ins) {
    SV& s = top();
    Value* d = B.CreateCall(helper("rdb_math", B.getDoubleTy(), {B.getInt32Ty(), B.getDoubleTy()}),
                            {B.getInt32(uint32_t(ins.a)), toDouble(s)});
    Value* null = s.null;
    fromDouble(s, d, T::T);
    s.null = null;
  }
  template <class T>
  void MATHD(const vm::Instr& ins) {
    SV& s = top();
    Value* d = B.CreateCall(helper("rdb_math", B.getDoubleTy(), {B.getInt32Ty(), B.getDoubleTy()}),
                            {B.getInt32(uint32_t(ins.a)), s.v});
    // Non-finite results are NULL: |d| == inf or d is NaN.
    Value* fin = B.CreateFCmpOLT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d),
                                 llvm::ConstantFP::getInfinity(B.getDoubleTy()));
    s.null = B.CreateOr(s.null, B.CreateNot(fin));
    s.v = d;
  }
  template <class T>
  void ABS(const vm::Instr&) {
    SV& s = top();
    if constexpr (std::is_same_v<T, I32> || std::is_same_v<T, RAT>) {
      Value* neg = B.CreateICmpSLT(s.v, B.getInt32(0));
      s.v = B.CreateSelect(neg, B.CreateNeg(s.v), s.v);
    } else if constexpr (std::is_same_v<T, F32> || std::is_same_v<T, F64>) {
      s.v = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, s.v);
    }
  }
  template <class T>
  void ISNULL(const vm::Instr&) {
    SV& s = top();
    SV r{Type::INTEGER};
    r.v = B.CreateZExt(s.null, B.getInt32Ty());
    r.null = B.getFalse();
    s = r;
  }
  template <class T>
  void NULL2ZERO(const vm::Instr&) {
    if constexpr (std::is_same_v<T, STR>) throw Unsupported("string values");
    else {
      SV& s = top();
      s.v = B.CreateSelect(s.null, llvm::Constant::getNullValue(s.v->getType()), s.v);
      if constexpr (std::is_same_v<T, RAT>) s.den = B.CreateSelect(s.null, B.getInt32(1), s.den);
      s.null = B.getFalse();
    }
  }
  template <class T>
  void LENGTH(const vm::Instr&) {
    throw Unsupported("string length");
  }

  void run() {
    for (const vm::Instr& ins : p.code) {
      switch (ins.op) {
#define VM_CASE(name, family, tag, from, to) \
  case vm::Op::name: family<tag>(ins); break;
        VM_OPCODES(VM_CASE)
#undef VM_CASE
        default: throw Unsupported("unknown instruction");
      }
    }
  }
};
}  // namespace

void lowerProgram(llvm::Module& M, llvm::IRBuilder<>& B, const vm::Program& p, const ir::Layout& in,
                  const ir::Layout& out, Frame& frame) {
  Lowering L{M.getContext(), M, B, p, in, out, frame, {}};
  L.run();
}

}  // namespace jit
