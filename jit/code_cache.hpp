// A directory of compiled units, so that a plan compiled once starts on its
// optimised code at once the next time it runs. A unit's object file is
// filed under a hash of everything its code depends on: the LLVM IR the
// lowering produced (before optimisation), the tier, the target and CPU, the
// LLVM version and the build of the running program (its ELF build id, so
// that any change to the lowering or the optimiser misses). Files are written
// whole (a temporary file renamed), so processes sharing the directory see a
// unit whole or not at all; each entry carries a hash of its key and bytes,
// so a damaged or misfiled entry is a miss, as is one that does not link. The
// directory must be the user's alone (code is run from it); the least
// recently used entries go when it outgrows its budget.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
class Module;
}  // namespace llvm

namespace jit {

class CodeCache {
 public:
  // `dir` is created when missing; an unusable directory leaves the cache off
  // (usable() false, with the reason in why()).
  CodeCache(std::string dir, uint64_t budgetBytes);
  bool usable() const { return usable_; }
  const std::string& why() const { return why_; }
  const std::string& dir() const { return dir_; }

  // The unit's key: the module's text and what else decides its code.
  std::string key(const llvm::Module& m, int tier, const std::string& target) const;
  // The object filed under `key`, or nullptr.
  std::unique_ptr<llvm::MemoryBuffer> load(const std::string& key) const;
  // Files the object under `key` (best effort: a full disk only loses the entry).
  void store(const std::string& key, const llvm::MemoryBuffer& object);
  // Drops the entry (one that failed to link).
  void drop(const std::string& key) const;

 private:
  void prune();
  std::string path(const std::string& key) const;
  // Every file of the cache starts so; nothing else in the directory is touched.
  static constexpr const char* kPrefix = "rdbjit-";
  static constexpr uint64_t kUnknown = ~uint64_t(0);
  std::string dir_, why_, buildId_;
  uint64_t budget_;
  uint64_t total_ = kUnknown;  // bytes of entries, once scanned
  bool usable_ = false;
};

// The build id of the object holding this code (hex), or "" when it has none.
std::string buildId();

}  // namespace jit
