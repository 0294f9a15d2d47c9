// The JIT's directory of compiled units (see code_cache.hpp).
#include "code_cache.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace jit {

namespace fs = std::filesystem;

namespace {

// The GNU build id note among an object's program headers.
struct IdSearch {
  uintptr_t base;  // the load address of the object holding buildId()
  std::string id;
};

int findNote(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<IdSearch*>(data);
  if (info->dlpi_addr != s->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t(3); };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof *n;
      const uint8_t* desc = name + align4(n->n_namesz);
      if (desc + n->n_descsz > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::equal(name, name + 4, "GNU")) {
        static const char* hex = "0123456789abcdef";
        for (size_t k = 0; k < n->n_descsz; ++k) s->id += {hex[desc[k] >> 4], hex[desc[k] & 15]};
        return 1;
      }
      p = desc + align4(n->n_descsz);
    }
  }
  return 0;
}

}  // namespace

std::string buildId() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&buildId), &info)) return "";
  link_map* lm = nullptr;
  IdSearch s{0, ""};
  if (dladdr1(reinterpret_cast<void*>(&buildId), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) && lm)
    s.base = lm->l_addr;
  dl_iterate_phdr(findNote, &s);
  return s.id;
}

CodeCache::CodeCache(std::string dir, uint64_t budgetBytes) : dir_(std::move(dir)), budget_(budgetBytes) {
  static const std::string id = buildId();
  if (id.empty()) {
    why_ = "the program has no build id to tell its code apart";
    return;
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || access(dir_.c_str(), W_OK | X_OK) != 0) {
    why_ = "cannot write " + dir_ + (ec ? ": " + ec.message() : "");
    return;
  }
  usable_ = true;
}

std::string CodeCache::key(const llvm::Module& m, int tier, const std::string& target) const {
  static const std::string id = buildId();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "retractor jit cache 1\n" << id << '\n' << LLVM_VERSION_STRING << '\n' << tier << '\n' << target << '\n';
  os.flush();
  // The module as bitcode: the same facts as its text, written several times faster.
  llvm::raw_string_ostream bc(text);
  llvm::WriteBitcodeToFile(m, bc);
  bc.flush();
  const auto h =
      llvm::BLAKE3::hash<20>(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  static const char* hex = "0123456789abcdef";
  std::string k;
  for (uint8_t b : h) k += {hex[b >> 4], hex[b & 15]};
  return k;
}

std::string CodeCache::path(const std::string& key) const { return dir_ + "/" + key + ".o"; }

std::unique_ptr<llvm::MemoryBuffer> CodeCache::load(const std::string& key) const {
  if (!usable_) return nullptr;
  auto buf = llvm::MemoryBuffer::getFile(path(key), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return nullptr;
  utimensat(AT_FDCWD, path(key).c_str(), nullptr, 0);  // recently used: pruned last
  return std::move(*buf);
}

void CodeCache::store(const std::string& key, const llvm::MemoryBuffer& object) {
  if (!usable_) return;
  static std::atomic<int> serial{0};
  const std::string tmp = path(key) + ".tmp." + std::to_string(getpid()) + "." + std::to_string(serial++);
  FILE* f = fopen(tmp.c_str(), "wb");
  if (!f) return;
  const bool ok = fwrite(object.getBufferStart(), 1, object.getBufferSize(), f) == object.getBufferSize();
  if (fclose(f) != 0 || !ok || rename(tmp.c_str(), path(key).c_str()) != 0) {
    unlink(tmp.c_str());
    return;
  }
  prune();
}

void CodeCache::drop(const std::string& key) const { unlink(path(key).c_str()); }

// The least recently used files go until the directory is within 3/4 of its
// budget; temporary files an hour old go too.
void CodeCache::prune() {
  struct Entry {
    fs::path p;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) {
      // A writer that died between writing and renaming left it.
      std::error_code e1;
      if (now - e.last_write_time(e1) > std::chrono::hours(1) && !e1) fs::remove(e.path(), e1);
      continue;
    }
    if (e.path().extension() != ".o") continue;
    std::error_code e1, e2;
    const uint64_t size = e.file_size(e1);
    const auto used = e.last_write_time(e2);
    if (e1 || e2) continue;
    entries.push_back({e.path(), size, used});
    total += size;
  }
  if (total <= budget_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= budget_ / 4 * 3) break;
    if (fs::remove(e.p, ec)) total -= e.size;
  }
}

}  // namespace jit
