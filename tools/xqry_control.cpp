// xqry's control commands (xqry_commands.hpp): hello, kill and the IPC counters,
// and the changes to the running plan: an ad hoc import, a remove, a reset.
#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "xqry_commands.hpp"

namespace xqry {

namespace {

// What a change is, for the message when its outcome is unknown: the thing
// that may or may not have happened, and how to find out.
struct Subject {
  std::string what;  // "k1 was added"
  std::string check;
};

bool identStart(char c) { return std::isalpha((unsigned char)c) || c == '_'; }
bool identChar(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

// The name an ad hoc statement defines: the word after STREAM (SELECT,
// DECLARE), or after RULE for a rule; quoted text is skipped. A statement
// that names none is spoken of as a whole.
Subject importSubject(const std::string& text) {
  std::vector<std::string> words;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\'' || text[i] == '"') {
      const size_t end = text.find(text[i], i + 1);
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (identStart(text[i])) {
      size_t j = i;
      while (j < text.size() && identChar(text[j])) ++j;
      words.push_back(text.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
  auto upper = [](std::string w) {
    for (auto& c : w) c = char(std::toupper((unsigned char)c));
    return w;
  };
  if (words.size() >= 2 && upper(words[0]) == "RULE")
    return {"rule " + words[1] + " was added", "import it again (a rule that runs already is refused by its name)"};
  for (size_t k = 0; k + 1 < words.size(); ++k)
    if (upper(words[k]) == "STREAM") return {words[k + 1] + " was added", "check with xqry -d"};
  return {"the statement was imported", "check with xqry -d"};
}

// A change of the running plan; its reply is "OK" or the reason it was
// refused (exit 2). The answer is awaited however long the engine works on
// it; only a connection or an engine that ended first leaves the outcome
// unknown, and that is said as such (exit 104), never as a refusal.
int cmdChange(Session& s, const Options& o, const char* message, const std::string& argument, const Subject& subject) {
  ipc::Tree r;
  std::string err;
  const auto st = s.change(message, argument, r, &err);
  if (st == ipc::Client::Status::Lost) {
    const std::string why = fmt::format("the engine did not answer ({}); whether {} is unknown", err, subject.what);
    gLog(fmt::format("xqry: {}: {}", why, subject.check));
    if (o.format == Format::Jsonl) jsonError("outcome_unknown", why);
    return kExitOutcomeUnknown;
  }
  if (st != ipc::Client::Status::Ok) gLog("IPC: " + err);
  const std::string v = r.get("db");
  if (v == "OK") return kExitOk;
  gLog("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("rejected", v);
  return kExitNotFound;
}

}  // namespace

int cmdHello(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("hello", "", r);
  const std::string v = r.get("db");
  if (v == "world") {
    if (o.format == Format::Jsonl) outJson(event("pong"));
    return kExitOk;
  }
  gLog("bad rcv: " + v);
  if (o.format == Format::Jsonl) jsonError("bad_reply", v);
  return kExitBadHello;
}

int cmdKill(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("kill", "", r);
  return kExitOk;
}

int cmdStats(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("status", "", r);
  const ipc::Tree* db = r.child("db");
  if (!db) throw std::runtime_error("No such node (db)");
  Json status = Json::object();
  for (auto& [k, v] : db->children) appendEntry(status, k, v.value);
  Json doc = yamlDocument();
  doc["status"] = std::move(status);
  outYaml(doc);
  return kExitOk;
}

int cmdRemove(Session& s, const Options& o) {
  return cmdChange(s, o, "remove", o.remove, {o.remove + " was removed", "check with xqry -d, or remove it again"});
}
int cmdAdhoc(Session& s, const Options& o) { return cmdChange(s, o, "adhoc", o.adhoc, importSubject(o.adhoc)); }
// The whole file goes to the server, which compiles it and swaps plans at a
// slot boundary (an empty file makes the instance idle).
int cmdReset(Session& s, const Options& o) {
  std::ifstream in(o.reset, std::ios::binary);
  if (!in) {
    gLog("xqry: cannot read " + o.reset);
    return kExitNotFound;
  }
  std::stringstream text;
  text << in.rdbuf();
  return cmdChange(s, o, "reset", text.str(), {"the plan was replaced", "check with xqry -d"});
}

}  // namespace xqry
