// The JIT's directory of compiled units (see code_cache.hpp).
#include "code_cache.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <llvm-c/Core.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace jit {

namespace fs = std::filesystem;

namespace {

std::string hex(const uint8_t* b, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string k;
  for (size_t i = 0; i < n; ++i) k += {digits[b[i] >> 4], digits[b[i] & 15]};
  return k;
}

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
        s->id = hex(desc, n->n_descsz);
        return 1;
      }
      p = desc + align4(n->n_descsz);
    }
  }
  return 0;
}

llvm::ArrayRef<uint8_t> bytes(const std::string& s) {
  return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
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
  static const std::string id = buildId();  // the same for the process's life
  buildId_ = id;
  if (buildId_.empty()) {
    why_ = "the program has no build id to tell its code apart";
    return;
  }
  std::error_code ec;
  // A directory made here is the user's alone; one that was there is left as it is.
  if (fs::create_directories(dir_, ec) && !ec)
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace, ec);
  // Code is run from here: the directory must be ours alone (as ssh asks of ~/.ssh).
  struct stat st;
  if (ec || lstat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    why_ = "cannot use " + dir_ + (ec ? ": " + ec.message() : ": not a directory");
    return;
  }
  if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    why_ = dir_ + " is not the user's alone (another user could put code there)";
    return;
  }
  if (access(dir_.c_str(), W_OK | X_OK) != 0) {
    why_ = "cannot write " + dir_;
    return;
  }
  usable_ = true;
}

std::string CodeCache::key(const llvm::Module& m, int tier, const std::string& target) const {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);  // the library running, not the headers built against
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "retractor jit cache 2\n"
     << buildId_ << '\n'
     << major << '.' << minor << '.' << patch << '\n'
     << tier << '\n'
     << target << '\n';
  os.flush();
  // The module as bitcode: the same facts as its text, written several times faster.
  llvm::raw_string_ostream bc(text);
  llvm::WriteBitcodeToFile(m, bc);
  bc.flush();
  const auto h = llvm::BLAKE3::hash<20>(bytes(text));
  return hex(h.data(), h.size());
}

// An entry is the object followed by a trailer: BLAKE3 of (key, object) and a
// magic word, so that a file cut short, changed, or filed under another key is
// a miss, never code run in the wrong place.
namespace {
constexpr char kMagic[8] = {'r', 'd', 'b', 'j', 'i', 't', '2', '\n'};
constexpr size_t kHash = 20, kTrailer = kHash + sizeof kMagic;
constexpr uint64_t kMaxEntry = uint64_t(64) << 20;
std::array<uint8_t, kHash> seal(const std::string& key, llvm::StringRef object) {
  llvm::BLAKE3 h;
  h.update(bytes(key));
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(object.data()), object.size()));
  return h.final<kHash>();
}
}  // namespace

std::string CodeCache::path(const std::string& key) const { return dir_ + "/" + kPrefix + key + ".o"; }

std::unique_ptr<llvm::MemoryBuffer> CodeCache::load(const std::string& key) const {
  if (!usable_) return nullptr;
  // A regular file, not followed through a link, and never a FIFO's wait.
  const int fd = open(path(key).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  std::unique_ptr<llvm::MemoryBuffer> out;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) > kTrailer &&
      uint64_t(st.st_size) <= kMaxEntry) {
    std::string data(size_t(st.st_size), '\0');
    size_t got = 0;
    while (got < data.size()) {
      const ssize_t n = read(fd, data.data() + got, data.size() - got);
      if (n <= 0) break;
      got += size_t(n);
    }
    const size_t objectSize = data.size() - kTrailer;
    const llvm::StringRef object(data.data(), objectSize);
    const auto sealed = seal(key, object);
    if (got == data.size() && memcmp(data.data() + objectSize + kHash, kMagic, sizeof kMagic) == 0 &&
        memcmp(data.data() + objectSize, sealed.data(), kHash) == 0) {
      out = llvm::MemoryBuffer::getMemBufferCopy(object, path(key));
      futimens(fd, nullptr);  // recently used: pruned last
    }
  }
  close(fd);
  return out;
}

void CodeCache::store(const std::string& key, const llvm::MemoryBuffer& object) {
  if (!usable_) return;
  const std::string tmp = dir_ + "/" + kPrefix + key + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = mkostemp(name.data(), O_CLOEXEC);  // a new file of ours (0600), never one planted
  if (fd < 0) return;
  const auto sealed = seal(key, object.getBuffer());
  auto writeAll = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n) {
      const ssize_t k = write(fd, c, n);
      if (k <= 0) return false;
      c += k, n -= size_t(k);
    }
    return true;
  };
  const bool ok = writeAll(object.getBufferStart(), object.getBufferSize()) && writeAll(sealed.data(), sealed.size()) &&
                  writeAll(kMagic, sizeof kMagic);
  if (close(fd) != 0 || !ok || rename(name.data(), path(key).c_str()) != 0) {
    unlink(name.data());
    return;
  }
  // The directory is scanned once a process, then its size kept up to date.
  const uint64_t size = object.getBufferSize() + kTrailer;
  if (total_ == kUnknown || total_ + size > budget_) prune();
  else total_ += size;
}

void CodeCache::drop(const std::string& key) const { unlink(path(key).c_str()); }

// The least recently used entries go until the directory is within 3/4 of its
// budget; temporary files an hour old go too. Only the cache's own files
// (their names start with kPrefix) are looked at.
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
  fs::directory_iterator it(dir_, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    std::error_code e1, e2;
    if (name.find(".tmp.") != std::string::npos) {
      // A writer that died between writing and renaming left it.
      if (now - it->last_write_time(e1) > std::chrono::hours(1) && !e1) fs::remove(it->path(), e1);
      continue;
    }
    if (it->path().extension() != ".o" || !it->is_regular_file(e1)) continue;
    const uint64_t size = it->file_size(e1);
    const auto used = it->last_write_time(e2);
    if (e1 || e2) continue;
    entries.push_back({it->path(), size, used});
    total += size;
  }
  if (total > budget_) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& e : entries) {
      if (total <= budget_ / 4 * 3) break;
      std::error_code e1;
      if (fs::remove(e.p, e1)) total -= e.size;
    }
  }
  total_ = total;
}

}  // namespace jit
