// The JIT's driver: one ORC LLJIT per tier, units of programs lowered
// (lower.cpp), optimised and added together, and removed by unit.
#include "jit.hpp"

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "code_cache.hpp"
#include "lower.hpp"
#include "perf_map.hpp"

namespace jit {

using llvm::IRBuilder;
using llvm::Value;

namespace {
std::once_flag gInit;

}  // namespace

struct Jit::Impl {
  // One LLJIT per tier: the quick one generates code without optimising it
  // (FastISel), the optimising one at the default level.
  std::unique_ptr<llvm::orc::LLJIT> lljit[2];
  std::map<std::string, llvm::orc::ResourceTrackerSP> units[2];
  // The host as the optimiser sees it: the vectorisers' costs are this CPU's.
  std::unique_ptr<llvm::TargetMachine> host;
  // The target the LLJITs were made for; with a code cache, each tier's code
  // generator (as its LLJIT's) and the target as the cache's keys name it.
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::unique_ptr<CodeCache> cache;
  std::unique_ptr<llvm::TargetMachine> codegen[2];
  std::string cacheTarget;
  std::mutex mu;
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {}
Jit::~Jit() = default;

static std::unique_ptr<llvm::orc::LLJIT> makeLLJIT(Tier tier, llvm::orc::JITTargetMachineBuilder jtmb,
                                                   std::string& error) {
  if (tier == Tier::Quick) jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  auto j = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!j) {
    error = llvm::toString(j.takeError());
    return nullptr;
  }
  auto& lljit = **j;
  addPerfMap(lljit);
  llvm::orc::SymbolMap syms;
  auto add = [&](const char* name, void* fn) {
    syms[lljit.mangleAndIntern(name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported);
  };
#define RDB_ADD_HELPER(name) add(#name, reinterpret_cast<void*>(&name));
  RDB_JIT_HELPERS(RDB_ADD_HELPER)
#undef RDB_ADD_HELPER
  if (auto err = lljit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms)))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  return std::move(*j);
}

std::unique_ptr<Jit> Jit::create(std::string& error) {
  std::call_once(gInit, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = llvm::toString(jtmb.takeError());
    return nullptr;
  }
  // What LLJIT picks for JITLink on x86-64 ELF, said here so that code the
  // cache's code generator makes (useCache) is the same code.
  jtmb->setCodeModel(llvm::CodeModel::Small);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  std::unique_ptr<Jit> out(new Jit());
  for (Tier t : {Tier::Quick, Tier::Optimised}) {
    out->impl_->lljit[int(t)] = makeLLJIT(t, *jtmb, error);
    if (!out->impl_->lljit[int(t)]) return nullptr;
  }
  if (auto tm = jtmb->createTargetMachine()) out->impl_->host = std::move(*tm);
  else llvm::consumeError(tm.takeError());  // the optimiser then costs a generic CPU
  out->impl_->jtmb = *jtmb;
  return out;
}

bool Jit::useCache(const std::string& dir, uint64_t budgetBytes, std::string& why) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto cache = std::make_unique<CodeCache>(dir, budgetBytes);
  if (!cache->usable()) {
    why = cache->why();
    return false;
  }
  for (Tier t : {Tier::Quick, Tier::Optimised}) {
    llvm::orc::JITTargetMachineBuilder b = *impl_->jtmb;
    if (t == Tier::Quick) b.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
    auto tm = b.createTargetMachine();
    if (!tm) {
      why = llvm::toString(tm.takeError());
      return false;
    }
    impl_->codegen[int(t)] = std::move(*tm);
  }
  const auto& b = *impl_->jtmb;
  impl_->cacheTarget = b.getTargetTriple().str() + " " + b.getCPU() + " " + b.getFeatures().getString() + " cm" +
                       std::to_string(int(b.getCodeModel().value_or(llvm::CodeModel::Large))) + " rm" +
                       std::to_string(int(b.getRelocationModel().value_or(llvm::Reloc::Static)));
  impl_->cache = std::move(cache);
  return true;
}

bool Jit::supports(const vm::Program& p, std::string& why) {
  // LLVM's time on one function grows faster than its size: very wide
  // records (a window of thousands of elements) run on the VM instead.
  constexpr size_t kMaxInstructions = 8192;
  if (p.code.size() > kMaxInstructions) {
    why = "program of " + std::to_string(p.code.size()) + " instructions (the JIT takes up to " +
          std::to_string(kMaxInstructions) + ")";
    return false;
  }
  for (auto& ins : p.code) {
    if (!vm::jitSupports(ins.op)) {  // the table's JIT column
      why = std::string("string operation ") + vm::opName(ins.op);
      return false;
    }
  }
  return true;
}

namespace {

// False (with `why`, the function removed) when the verifier refuses fn.
bool verified(llvm::Function& fn, std::string& why) {
  std::string err;
  llvm::raw_string_ostream es(err);
  if (!llvm::verifyFunction(fn, &es)) return true;
  why = "LLVM verifier: " + es.str();
  fn.eraseFromParent();
  return false;
}

// Defines request r's function in M: false (with `why`) when it cannot be lowered.
bool define(llvm::Module& M, IRBuilder<>& B, const Request& r, std::string& why) {
  llvm::LLVMContext& C = M.getContext();
  auto ptr = llvm::PointerType::getUnqual(C);
  auto fnTy = llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, ptr}, false);
  auto blockTy = llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, ptr, B.getInt64Ty()}, false);
  auto* fn = llvm::Function::Create(r.block ? blockTy : fnTy, llvm::Function::ExternalLinkage, r.name, &M);
  for (auto& a : fn->args())
    if (a.getType()->isPointerTy()) a.addAttr(llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(C, "entry", fn);
  B.SetInsertPoint(entry);
  auto args = fn->arg_begin();
  Frame L;
  const std::vector<int> bases = r.operands.empty() ? std::vector<int>{0} : r.operands;
  for (int b : bases) {
    L.opBase.push_back(b);
    L.opOff.push_back(size_t(b) < r.in->elems.size() ? r.in->elems[size_t(b)].offset : 0);
  }
  llvm::BasicBlock *loop = nullptr, *exit = nullptr;
  llvm::PHINode* idx = nullptr;
  if (!r.block) {
    L.opData = {&args[0]};
    L.opNull = {&args[1]};
    L.outData = &args[2];
    L.outNulls = &args[3];
  } else {
    // for (i = 0; i < count; ++i): operand pointers i*K.. of the two arrays,
    // output record i of a contiguous run.
    loop = llvm::BasicBlock::Create(C, "record", fn);
    exit = llvm::BasicBlock::Create(C, "done", fn);
    Value* count = &args[4];
    B.CreateCondBr(B.CreateICmpSGT(count, B.getInt64(0)), loop, exit);
    B.SetInsertPoint(loop);
    idx = B.CreatePHI(B.getInt64Ty(), 2);
    idx->addIncoming(B.getInt64(0), entry);
    const uint64_t K = bases.size();
    Value* first = B.CreateMul(idx, B.getInt64(K));
    for (uint64_t k = 0; k < K; ++k) {
      Value* at = B.CreateAdd(first, B.getInt64(k));
      L.opData.push_back(B.CreateLoad(ptr, B.CreateGEP(ptr, &args[0], at)));
      L.opNull.push_back(B.CreateLoad(ptr, B.CreateGEP(ptr, &args[1], at)));
    }
    L.outData = B.CreateGEP(B.getInt8Ty(), &args[2], B.CreateMul(idx, B.getInt64(uint64_t(r.out->recordSize))));
    L.outNulls = B.CreateGEP(B.getInt8Ty(), &args[3], B.CreateMul(idx, B.getInt64(uint64_t(r.out->elems.size()))));
  }
  try {
    lowerProgram(M, B, *r.program, *r.in, *r.out, L);
    if (r.block) {
      Value* next = B.CreateAdd(idx, B.getInt64(1));
      idx->addIncoming(next, B.GetInsertBlock());
      B.CreateCondBr(B.CreateICmpSLT(next, &args[4]), loop, exit);
      B.SetInsertPoint(exit);
    }
    B.CreateRetVoid();
    return verified(*fn, why);
  } catch (const Unsupported& e) {
    why = e.what();
    fn->eraseFromParent();
    return false;
  }
}

// -O2 over the whole unit, once, off the hot path (the quick tier skips it),
// with the loop and straight-line vectorisers on (as a C++ compiler's -O2
// has them) and this CPU's costs (`host`, when known): a record's elements
// are worked on several at a time.
void optimise(llvm::Module& M, llvm::TargetMachine* host) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder PB(host, tuning);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  auto MPM = PB.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  MPM.run(M, MAM);
}

}  // namespace

std::vector<Result> Jit::compile(const std::string& unit, const std::vector<Request>& reqs, Tier tier) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<Result> results(reqs.size());
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(unit, *ctx);
  auto& lljit = *impl_->lljit[int(tier)];
  mod->setDataLayout(lljit.getDataLayout());
  mod->setTargetTriple(lljit.getTargetTriple().str());
  IRBuilder<> B(*ctx);
  std::vector<bool> lowered(reqs.size(), false);
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!reqs[i].chain) {
      lowered[i] = supports(*reqs[i].program, results[i].why) && define(*mod, B, reqs[i], results[i].why);
      continue;
    }
    bool ok = true;
    for (auto& s : *reqs[i].chain) ok = ok && supports(s.program, results[i].why);
    lowered[i] = ok &&
                 defineChain(*mod, B, reqs[i].name, *reqs[i].chain, reqs[i].chainExternals, reqs[i].chainSettled,
                             results[i].why) &&
                 verified(*mod->getFunction(reqs[i].name), results[i].why);
  }
  // The functions of the unit's code, once it is added; false when one is missing.
  auto find = [&](std::vector<Result>& out) {
    bool all = true;
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (!lowered[i]) continue;
      auto sym = lljit.lookup(reqs[i].name);
      if (!sym) {
        out[i].why = llvm::toString(sym.takeError());
        all = false;
        continue;
      }
      if (reqs[i].chain) out[i].chain = sym->toPtr<ChainFn>();
      else if (reqs[i].block) out[i].block = sym->toPtr<BlockFn>();
      else out[i].fn = sym->toPtr<FieldFn>();
    }
    return all;
  };
  CodeCache* cache = impl_->cache.get();
  const bool any = std::find(lowered.begin(), lowered.end(), true) != lowered.end();
  std::string key;
  if (cache && any) {
    key = cache->key(*mod, int(tier), impl_->cacheTarget);
    if (auto obj = cache->load(key)) {
      auto rt = lljit.getMainJITDylib().createResourceTracker();
      std::vector<Result> hit = results;
      if (!lljit.addObjectFile(rt, std::move(obj)) && find(hit)) {
        for (auto& r : hit) r.cached = true;
        impl_->units[int(tier)][unit] = rt;
        return hit;
      }
      // Unreadable or not this unit's code after all: compile it (and file it again).
      if (auto err = rt->remove()) llvm::consumeError(std::move(err));
      cache->drop(key);
    }
  }
  if (tier == Tier::Optimised) optimise(*mod, impl_->host.get());
  auto rt = lljit.getMainJITDylib().createResourceTracker();
  llvm::Error added = llvm::Error::success();
  if (cache && any) {
    // Code generated here rather than in the LLJIT, to file the object.
    llvm::orc::SimpleCompiler codegen(*impl_->codegen[int(tier)]);
    auto obj = codegen(*mod);
    if (obj) {
      cache->store(key, **obj);
      added = lljit.addObjectFile(rt, std::move(*obj));
    } else {
      added = obj.takeError();
    }
  } else {
    added = lljit.addIRModule(rt, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx)));
  }
  if (added) {
    std::string msg = llvm::toString(std::move(added));
    for (size_t i = 0; i < reqs.size(); ++i)
      if (lowered[i]) results[i].why = msg;
    return results;
  }
  impl_->units[int(tier)][unit] = rt;
  find(results);
  return results;
}

void Jit::removeUnit(const std::string& unit, Tier tier) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto& units = impl_->units[int(tier)];
  auto it = units.find(unit);
  if (it == units.end()) return;
  if (auto err = it->second->remove()) llvm::consumeError(std::move(err));
  units.erase(it);
}

}  // namespace jit
