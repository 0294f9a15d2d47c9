// xtrdb commands: the table (names, store needed, help, handler), the loop, each command.
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common.hpp"
#include "session.hpp"
#include "storage/store.hpp"

namespace xtrdb {

namespace fs = std::filesystem;
using storage::DescEntry;

// In the order help lists them.
std::span<const Session::Command> Session::commands() {
  static const Command table[] = {
      {"exit|quit|q", "", false, "exit", &Session::cmdQuit},
      {"quitdrop|qd", "", false, "exit & drop artifacts (data, .desc, .meta)", &Session::cmdQuitDrop},
      {"storage", "[path]", false, "set storage path for database", &Session::cmdStorage},
      {"policy", "[name]", false, "set storage policy", &Session::cmdPolicy},
      {"echo", "", false, "print message on terminal", &Session::cmdEcho},
      {"system", "", true, "execute system command", &Session::cmdSystem},
      {"#|rem", "[text]", false, "comment line", &Session::cmdComment},
      {"help|h", "", false, "show this help", &Session::cmdHelp},
      {"append", "", true, "append payload to database", &Session::cmdAppend},
      {"cap", "[value]", true, "set device stream backread capacity", &Session::cmdCap},
      {"dec|hex", "", true, "type of input/output of byte/number fields", &Session::cmdBase},
      {"desc|descc", "", true, "show schema (descc: single line)", &Session::cmdDesc},
      {"dropfile", "[file1] ... }", false, "remove listed file(s), end with }", &Session::cmdDropfile},
      {"dump", "", true, "show payload memory", &Session::cmdDump},
      {"getpos", "[position]", true, "show payload field value", &Session::cmdGetpos},
      {"input", "[[field][value]]", true, "fill payload", &Session::cmdInput},
      {"list|rlist", "[n]", true, "print n records from the front/back", &Session::cmdList},
      {"meta", "", true, "show meta index (null patterns) for open db", &Session::cmdMeta},
      {"metaraw", "", true, "show internal meta file structure", &Session::cmdMetaRaw},
      {"open", "file [schema]", false,
       "open or create database with schema\nexample: open test_db { INTEGER dane STRING name[3] }", &Session::cmdOpen},
      {"print|printt", "", true, "show payload (printt: single line)", &Session::cmdPrint},
      {"purge", "", true, "remove all records from database", &Session::cmdPurge},
      {"read|rread", "[n]", true, "read record n from the front/back into payload", &Session::cmdRead},
      {"rox", "", true, "remove on exit flip (data, .desc, .meta)", &Session::cmdRox},
      {"set", "[field][value]", true, "set payload field value", &Session::cmdSet},
      {"setpos", "[position][value]", true, "set payload field value by position", &Session::cmdSetpos},
      {"size", "", true, "show database size in records", &Session::cmdSize},
      {"status", "", true, "show status of payload", &Session::cmdStatus},
      {"write", "[n]", true, "from payload send record to database", &Session::cmdWrite},
  };
  return table;
}

const Session::Command* Session::find(const std::string& name) {
  for (auto& c : commands()) {
    const std::string names = c.names;
    for (size_t at = 0; at <= names.size();) {
      const size_t bar = std::min(names.find('|', at), names.size());
      if (names.compare(at, bar - at, name) == 0) return &c;
      at = bar + 1;
    }
  }
  return nullptr;
}

Session::Outcome Session::dispatch(const std::string& name) {
  const Command* c = find(name);
  if (!c || c->needsStore) {
    if (!open_) {
      std::cout << c_.red << "unconnected\n" << c_.reset;
      return Outcome::quiet;
    }
    if (!c) {
      std::cout << c_.red << "?\n" << c_.reset;
      return Outcome::quiet;
    }
  }
  return (this->*c->handler)(name);
}

int Session::run() {
  const std::string prompt = batch_ ? "" : ".";
  const std::string ok = batch_ ? "" : "ok\n";
  std::string cmd;
  while (true) {
    if (cmd != "#") std::cout << prompt;
    if (!word(cmd)) break;  // end of input acts as quit
    const Outcome o = dispatch(cmd);
    if (o == Outcome::stop) break;
    if (o == Outcome::ok) std::cout << ok;
  }
  closeStore();
  std::cout.flush();
  return kExitOk;
}

Session::Outcome Session::cmdHelp(const std::string&) {
  std::cout << c_.green;
  for (auto& c : commands()) {
    std::string column = c.names;
    if (*c.usage) column += std::string(" ") + c.usage;
    const std::string help = c.help;
    for (size_t at = 0; at <= help.size();) {
      const size_t nl = std::min(help.find('\n', at), help.size());
      std::cout << fmt::format("{:<32}{}\n", column, help.substr(at, nl - at));
      column.clear();
      at = nl + 1;
    }
  }
  std::cout << "xtrdb - data accessing tool.\n" << c_.reset;
  return Outcome::ok;
}

// ---------------------------------------------------------------- session commands
Session::Outcome Session::cmdQuit(const std::string&) { return Outcome::stop; }

Session::Outcome Session::cmdQuitDrop(const std::string&) {
  if (open_) disposable_ = true;
  return Outcome::stop;
}

Session::Outcome Session::cmdStorage(const std::string&) {
  word(storageDir_);
  return Outcome::quiet;
}

Session::Outcome Session::cmdPolicy(const std::string&) {
  if (word(policy_)) {
    for (auto& ch : policy_) ch = char(toupper((unsigned char)ch));
  }
  return Outcome::quiet;
}

Session::Outcome Session::cmdEcho(const std::string&) {
  std::cout << c_.blink << restOfLine() << "\n" << c_.reset;
  return Outcome::quiet;
}

Session::Outcome Session::cmdComment(const std::string& name) {
  restOfLine();
  return name == "rem" ? Outcome::ok : Outcome::quiet;
}

Session::Outcome Session::cmdSystem(const std::string&) {
  const std::string line = restOfLine();
  std::cout.flush();
  fflush(stdout);
  const int rc = std::system(line.c_str());
  if (rc != 0) std::cout << c_.red << "system command error: " << rc << "\n" << c_.reset;
  return Outcome::ok;
}

Session::Outcome Session::cmdDropfile(const std::string&) {
  std::string tok;
  do {
    if (!word(tok)) break;
    std::string path = tok;
    if (!storageDir_.empty() && !contains(tok, storageDir_)) path = storage::ArtifactPaths::inDir(storageDir_, tok);
    std::error_code ec;
    fs::remove(path, ec);
  } while (!contains(tok, "}"));
  return Outcome::ok;
}

// ---------------------------------------------------------------- payload commands
Session::Outcome Session::cmdSize(const std::string&) {
  std::cout << count() << " Record(s)\n" << recSize_ << " Byte(s) per record.\n";
  return Outcome::quiet;
}

Session::Outcome Session::cmdDesc(const std::string& name) {
  std::cout << c_.yellow << (name == "desc" ? desc_.text() : desc_.textLine()) << c_.reset << "\n";
  return Outcome::quiet;
}

Session::Outcome Session::cmdSet(const std::string&) {
  setField();
  status_ = Status::changed;
  return Outcome::quiet;
}

Session::Outcome Session::cmdInput(const std::string&) {
  for (size_t i = 0; i < desc_.entries.size(); ++i) setField();
  return Outcome::quiet;
}

Session::Outcome Session::cmdSetpos(const std::string&) {
  long long pos;
  if (!integer(pos)) return Outcome::quiet;
  const DescEntry* e = pos >= 0 && size_t(pos) < desc_.entries.size() ? &desc_.entries[size_t(pos)] : nullptr;
  if (!e || !e->isData() ||
      (e->type != ir::Type::INTEGER && e->type != ir::Type::DOUBLE && e->type != ir::Type::BYTE &&
       e->type != ir::Type::STRING)) {
    std::cerr << "field not found\n";
    status_ = Status::changed;
    return Outcome::quiet;
  }
  if (setPosition(size_t(pos))) status_ = Status::changed;
  return Outcome::quiet;
}

Session::Outcome Session::cmdGetpos(const std::string&) {
  long long pos;
  if (!integer(pos) || pos < 0 || size_t(pos) >= desc_.entries.size()) return Outcome::quiet;
  const DescEntry& e = desc_.entries[size_t(pos)];
  if (payload_.nulls[size_t(pos)]) {
    std::cout << entryName(e) << ": null\n";
    return Outcome::quiet;
  }
  if (!e.isData() || (e.count != 1 && e.type != ir::Type::STRING)) return Outcome::ok;
  // Decimal whatever `hex` says; UINT and RATIONAL print nothing.
  if (e.type != ir::Type::UINT && e.type != ir::Type::RATIONAL)
    std::cout << storage::entryText(e, payload_.data.data() + offset_[size_t(pos)]) << "\n";
  return Outcome::ok;
}

Session::Outcome Session::cmdPrint(const std::string& name) {
  if (name == "print") std::cout << c_.orange << payloadBlock() << c_.reset;
  else std::cout << c_.orange << payloadLine() << c_.reset << "\n";
  return Outcome::quiet;
}

Session::Outcome Session::cmdStatus(const std::string&) {
  static const char* const names[] = {"clean", "fetched", "changed", "stored", "error"};
  std::cout << names[int(status_)] << "\n";
  return Outcome::ok;
}

Session::Outcome Session::cmdBase(const std::string& name) {
  hex_ = name == "hex";
  return Outcome::ok;
}

Session::Outcome Session::cmdDump(const std::string&) {
  for (uint8_t b : payload_.data) std::cout << fmt::format("{:02x} ", b);
  std::cout << "\n";
  return Outcome::ok;
}

Session::Outcome Session::cmdRox(const std::string&) {
  rox_ = !rox_;
  disposable_ = rox_;
  return Outcome::ok;
}

// ---------------------------------------------------------------- record commands
Session::Outcome Session::cmdRead(const std::string& name) {
  long long n;
  if (!integer(n)) return Outcome::quiet;
  if (declared_) {
    if (name == "read") throw Fatal("storage::read: cannot read directly from declared (device/textsource) storage");
    readDeclared(uint64_t(std::max<long long>(n, 0)), true);
    status_ = Status::fetched;
    return Outcome::ok;
  }
  const uint64_t cnt = count();
  if (n < 0 || uint64_t(n) >= cnt) {
    std::cout << c_.red << "record out of range - read command\n" << c_.reset;
    return Outcome::quiet;
  }
  status_ = readAt(name == "read" ? uint64_t(n) : cnt - 1 - uint64_t(n)) ? Status::fetched : Status::error;
  return Outcome::ok;
}

Session::Outcome Session::cmdList(const std::string& name) {
  long long n;
  if (!integer(n)) return Outcome::quiet;
  for (long long i = 0; i < n; ++i) {
    const uint64_t cnt = count();
    if (uint64_t(i) >= cnt) {
      std::cout << c_.red << "record out of range - list command\n" << c_.reset;
      continue;
    }
    bool ok = true;
    if (declared_) {
      if (name == "list") throw Fatal("storage::read: cannot read directly from declared (device/textsource) storage");
      readDeclared(uint64_t(i), false);
    } else {
      ok = readAt(name == "list" ? uint64_t(i) : cnt - 1 - uint64_t(i));
    }
    status_ = ok ? Status::fetched : Status::error;
    if (!ok) {
      std::cout << c_.red << "fetch error\n" << c_.reset;
      continue;
    }
    std::cout << c_.orange << payloadLine() << c_.reset << "\n";
  }
  return Outcome::quiet;
}

Session::Outcome Session::cmdAppend(const std::string&) {
  if (declared_) throw Fatal("storage::write: append to '" + paths_.data() + "' failed (declared source is read-only)");
  fam_.append(payload_.data.data(), bitmap(payload_.nulls));
  fam_.flush();             // an inspector writes through: the next command may read the files directly
  metaTailHidden_ = false;  // the flush wrote the last run back
  status_ = Status::stored;
  return Outcome::ok;
}

Session::Outcome Session::cmdWrite(const std::string&) {
  long long n;
  if (!integer(n)) return Outcome::quiet;
  if (n < 0 || uint64_t(n) >= count()) {
    std::cout << c_.red << "record out of range - Check append command.\n" << c_.reset;
    return Outcome::quiet;
  }
  if (declared_)
    throw Fatal("storage::write: overwrite to '" + paths_.data() + "' failed (declared source is read-only)");
  fam_.store->update(uint64_t(n), payload_.data.data());
  const auto bm = bitmap(payload_.nulls);
  if (uint64_t(n) < fam_.meta->records()) {
    const bool rewrites = !fam_.store->shadowed() && fam_.meta->bitmapAt(uint64_t(n)) != bm;
    fam_.meta->update(uint64_t(n), bm);
    if (rewrites) metaTailHidden_ = false;  // the whole file was rewritten
  }
  status_ = Status::stored;
  return Outcome::ok;
}

Session::Outcome Session::cmdPurge(const std::string&) {
  if (!declared_) {
    fam_.store->purge();
    fam_.meta->reset();
    metaTailHidden_ = false;
  }
  return Outcome::ok;
}

Session::Outcome Session::cmdCap(const std::string&) {
  long long n;
  if (!integer(n)) return Outcome::quiet;
  if (declared_) {
    capacity_ = size_t(std::max<long long>(n, 1));
    while (history_.size() > capacity_) history_.pop_back();
  }
  return Outcome::ok;
}

// ---------------------------------------------------------------- meta listings
// The `.meta` file the listings show (its held-back last run left out, see
// openWritable); false, said in red, when there is none.
bool Session::listedMeta(std::string& path, storage::MetaFileView& view) const {
  path = metaPath();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::cout << c_.red << "meta file not found: " << path << "\n" << c_.reset;
    return false;
  }
  const int N = int(desc_.entries.size());
  view = storage::readMetaFile(path, N);
  if (!metaTailShown(path) && !view.entries.empty()) {
    view.entries.pop_back();
    view.size -= uint64_t(storage::metaEntrySize(N));
  }
  return true;
}

Session::Outcome Session::cmdMeta(const std::string&) {
  std::string path;
  storage::MetaFileView view;
  if (!listedMeta(path, view)) return Outcome::quiet;
  const int N = int(desc_.entries.size());
  uint64_t total = 0;
  for (auto& e : view.entries)
    if (!e.gap) total += e.count;
  std::cout << c_.blue << "meta: " << path << "\n";
  std::cout << "interval: 1/1  total records: " << total << "\n" << c_.reset;
  size_t k = 0;
  for (auto& e : view.entries) {
    std::cout << c_.yellow << "[" << k++ << "] ";
    if (e.gap) {
      std::cout << "gap (duration:" << e.count << ")\n";
    } else {
      std::cout << "[";
      for (int i = 0; i < N; ++i) {
        if (i) std::cout << " ";
        std::cout << entryName(desc_.entries[size_t(i)]) << ":" << (e.isNull(size_t(i)) ? "null" : "ok");
      }
      std::cout << "] runs:" << e.count << "\n";
    }
    std::cout << c_.reset;
  }
  std::cout << c_.blue << view.entries.size() << " segment(s)\n" << c_.reset;
  return Outcome::quiet;
}

Session::Outcome Session::cmdMetaRaw(const std::string&) {
  std::string path;
  storage::MetaFileView view;
  if (!listedMeta(path, view)) return Outcome::quiet;
  const int N = int(desc_.entries.size());
  const uint64_t E = uint64_t(storage::metaEntrySize(N)), size = view.size;
  if (size < 8 || (size - 8) % E != 0)
    std::cout << c_.yellow << "warning: unexpected meta payload alignment\n" << c_.reset;
  std::cout << c_.blue << "meta raw: " << path << "\n" << c_.reset;
  std::cout << "header size: 8\n";
  std::cout << "entry size: " << E << "\n";
  std::cout << "sampling interval: 1/1\n";
  size_t k = 0;
  for (auto& e : view.entries) {
    std::cout << "entry[" << k << "] count:" << e.count << " gap:" << (e.gap ? 1 : 0) << " bitsetSize:" << e.bitCount
              << " bitsetHex:";
    for (size_t b = 0; b < (size_t(N) + 7) / 8; ++b) {
      unsigned v = 0;
      for (size_t bit = 0; bit < 8; ++bit) {
        const size_t i = b * 8 + bit;
        if (i < e.bitCount && e.isNull(i)) v |= 1u << bit;
      }
      std::cout << fmt::format("{:02x}", v);
    }
    std::cout << "\n";
    ++k;
  }
  if (view.trailing > 0) std::cout << c_.red << "truncated entry at index: " << k << "\n" << c_.reset;
  std::cout << "entries: " << k << "\n";
  return Outcome::quiet;
}

}  // namespace xtrdb
