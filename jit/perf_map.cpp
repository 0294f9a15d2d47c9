// perf's map of JIT code: with RDB_PERF_MAP set, each function the JIT links
// gets a line "address size name" in /tmp/perf-PID.map, so `perf report`
// names generated code (a chain, a stream's program) instead of raw addresses.
#include "perf_map.hpp"

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace jit {

namespace {

class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  explicit PerfMapPlugin(FILE* f) : f_(f) {}
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PostFixupPasses.push_back([this](llvm::jitlink::LinkGraph& g) {
      static std::mutex mu;  // both tiers' links write the one file (open till exit)
      std::lock_guard<std::mutex> lock(mu);
      for (auto* s : g.defined_symbols())
        if (s->hasName() && s->getSize() > 0 && s->isCallable())
          fprintf(f_, "%llx %llx %s\n", (unsigned long long)s->getAddress().getValue(),
                  (unsigned long long)s->getSize(), s->getName().str().c_str());
      fflush(f_);
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}

 private:
  FILE* f_;
};

}  // namespace

void addPerfMap(llvm::orc::LLJIT& lljit) {
  if (!getenv("RDB_PERF_MAP")) return;
  auto* layer = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&lljit.getObjLinkingLayer());
  if (!layer) return;        // not linked by JITLink: no map
  static FILE* f = nullptr;  // one file for both tiers
  static std::once_flag once;
  std::call_once(once, [] {
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", int(getpid()));
    f = fopen(path, "w");
  });
  if (f) layer->addPlugin(std::make_unique<PerfMapPlugin>(f));
}

}  // namespace jit
