// xqry's control commands (xqry_commands.hpp): hello, kill and the IPC counters,
// and the changes to the running plan: an ad hoc import, a remove, a reset.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "xqry_commands.hpp"

namespace xqry {

namespace {

// A command whose reply is "OK" or the reason it was refused (exit 2).
int cmdExpectOk(Session& s, const Options& o, const char* message, const std::string& argument) {
  ipc::Tree r;
  s.ask(message, argument, r);
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

int cmdRemove(Session& s, const Options& o) { return cmdExpectOk(s, o, "remove", o.remove); }
int cmdAdhoc(Session& s, const Options& o) { return cmdExpectOk(s, o, "adhoc", o.adhoc); }
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
  return cmdExpectOk(s, o, "reset", text.str());
}

}  // namespace xqry
