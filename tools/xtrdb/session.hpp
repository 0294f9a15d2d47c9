// xtrdb: the token-driven session over one open artifact family, its commands in one table.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/layout.hpp"
#include "storage/artifacts.hpp"
#include "storage/descriptor.hpp"
#include "storage/element_text.hpp"
#include "storage/source.hpp"
#include "storage/store.hpp"

namespace xtrdb {

struct Colors {
  std::string red, orange, yellow, blue, green, blink, reset;
};

enum class Status { clean, fetched, changed, stored, error };

struct Record {
  std::vector<uint8_t> data;
  std::vector<bool> nulls;  // per descriptor entry
};

class Session {
 public:
  explicit Session(bool batch);
  ~Session() { closeStore(); }
  int run();

 private:
  // What a command leaves: nothing to say, "ok" (interactive mode), or the end of the session.
  enum class Outcome { quiet, ok, stop };
  struct Command {
    const char* names;  // every name it answers to, '|'-separated
    const char* usage;  // arguments as help shows them
    bool needsStore;    // refused ("unconnected") while no file is open
    const char* help;   // lines after the first are shown under it
    Outcome (Session::*handler)(const std::string& name);
  };
  static std::span<const Command> commands();
  static const Command* find(const std::string& name);
  Outcome dispatch(const std::string& name);

  // ---------------------------------------------------------- input
  bool word(std::string& w);
  std::string restOfLine();
  bool integer(long long& v);  // in the current input base
  bool integer32(int& v);

  // ---------------------------------------------------------- store
  uint64_t count() const { return declared_ ? fired_ : fam_.store->count(); }
  storage::Descriptor descriptorOf(const std::string& descPath);
  void openFile();
  void adopt(const storage::Descriptor& d, const std::string& descPath, const std::string& name);
  void openDeclared(const std::string& profile);
  void openWritable(const std::string& profile);
  void closeStore();
  std::vector<uint8_t> bitmap(const std::vector<bool>& nulls) const;
  std::vector<bool> nullsOf(const std::vector<uint8_t>& bm) const;
  bool readAt(uint64_t i);                      // non-declared: payload = record i
  void readDeclared(uint64_t back, bool flux);  // declared: history or next record
  std::string metaPath() const;
  bool metaTailShown(const std::string& path) const;
  bool listedMeta(std::string& path, storage::MetaFileView& view) const;

  // ---------------------------------------------------------- payload
  std::string valueText(size_t entry) const;
  std::string payloadLine() const;
  std::string payloadBlock() const;
  void setField();
  void setElement(ir::Type t, uint8_t* q, const std::string& token);
  bool setPosition(size_t pos);

  // ---------------------------------------------------------- commands
  Outcome cmdQuit(const std::string&);
  Outcome cmdQuitDrop(const std::string&);
  Outcome cmdStorage(const std::string&);
  Outcome cmdPolicy(const std::string&);
  Outcome cmdEcho(const std::string&);
  Outcome cmdSystem(const std::string&);
  Outcome cmdComment(const std::string& name);
  Outcome cmdHelp(const std::string&);
  Outcome cmdAppend(const std::string&);
  Outcome cmdCap(const std::string&);
  Outcome cmdBase(const std::string& name);
  Outcome cmdDesc(const std::string& name);
  Outcome cmdDropfile(const std::string&);
  Outcome cmdDump(const std::string&);
  Outcome cmdGetpos(const std::string&);
  Outcome cmdInput(const std::string&);
  Outcome cmdList(const std::string& name);
  Outcome cmdMeta(const std::string&);
  Outcome cmdMetaRaw(const std::string&);
  Outcome cmdOpen(const std::string&);
  Outcome cmdPrint(const std::string& name);
  Outcome cmdPurge(const std::string&);
  Outcome cmdRead(const std::string& name);
  Outcome cmdRox(const std::string&);
  Outcome cmdSet(const std::string&);
  Outcome cmdSetpos(const std::string&);
  Outcome cmdSize(const std::string&);
  Outcome cmdStatus(const std::string&);
  Outcome cmdWrite(const std::string&);

  bool batch_;
  Colors c_;
  std::string storageDir_, policy_ = "DEFAULT", file_;
  bool hex_ = false;
  int inBase_ = 10;
  bool rox_ = true;
  Status status_ = Status::clean;

  bool open_ = false;
  storage::Descriptor desc_;
  std::vector<int> offset_;  // per descriptor entry
  int recSize_ = 0;
  storage::ArtifactPaths paths_{""};  // the open family: data file (REF or name) and descriptor
  bool declared_ = false;
  bool disposable_ = false;
  bool metaTailHidden_ = false;
  storage::FamilyStores fam_;  // a writable family's store and index
  std::unique_ptr<storage::Source> source_;
  ir::Layout layout_;
  std::vector<int> elemEntry_;  // layout element -> descriptor entry
  std::deque<Record> history_;  // newest first
  size_t capacity_ = 1;
  uint64_t fired_ = 0;
  Record payload_;
};

}  // namespace xtrdb
