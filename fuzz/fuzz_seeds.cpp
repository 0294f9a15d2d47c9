// Writes the fuzz_wire seeds: IPC byte streams made of frames as ipc/wire.cpp
// builds them (encodeFrame over Tree::text) with the trees the client and the
// server send (tools.md §5: requests, replies, data messages, end markers,
// errors). Prefixed with the fuzz_wire piece-size byte.
//   fuzz_seeds OUT_DIR     (called by fuzz/make_corpus.sh)
#include <cstdio>
#include <string>
#include <vector>

#include "ipc/ipc.hpp"

namespace {

using ipc::Kind;
using ipc::Tree;

Tree request(const std::string& message, const std::string& argument) {
  Tree t;
  Tree& db = t.add("db");
  db.add("message", message);
  db.add("id", "4242");
  if (!argument.empty()) db.add("argument", argument);
  return t;
}

Tree dbValue(const std::string& v) {
  Tree t;
  t.add("db", v);
  return t;
}

Tree streamList() {
  Tree t;
  Tree& streams = t.add("db").add("stream");
  for (const char* id : {"sensorA", "joined", "window4"}) {
    Tree& s = streams.add(id, id);
    s.add("duration", "1/10");
    s.add("size", "342");
    s.add("count", "38");
    s.add("location", std::string(id) == "sensorA" ? "sensor_a.txt" : "");
    s.add("cap", "4");
  }
  return t;
}

Tree detail() {
  Tree t;
  Tree& db = t.add("db");
  Tree& f = db.add("field");
  f.add("joined_0", "joined_0");
  f.add("joined_1", "joined_1");
  Tree& ft = db.add("field_type");
  ft.add("joined_0", "INTEGER");
  ft.add("joined_1", "BYTE");
  db.add("stream", "joined");
  db.add("count", "2");
  db.add("duration", "1/10");
  db.add("location", "");
  db.add("cap", "1");
  db.add("size", "342");
  db.add("count_records", "38");
  db.add("is_declaration", "false");
  db.add("is_generated", "false");
  db.add("query", "7 tokens");
  db.add("processed_line", "SELECT sensorA[0], sensorA[1], sensorB[0] STREAM joined FROM sensorA + sensorB");
  return t;
}

Tree data(const std::vector<std::string>& values, const std::string& nullmap) {
  Tree t;
  t.add("stream", "joined");
  t.add("count", std::to_string(values.size()));
  for (size_t k = 0; k < values.size(); ++k) t.add(std::to_string(k), values[k]);
  t.add("nullmap", nullmap);
  return t;
}

Tree endMarker(const char* reason, const std::string& id) {
  Tree t;
  t.add("stream", ipc::kEndMarker);
  t.add("reason", reason);
  if (!id.empty()) t.add("id", id);
  return t;
}

Tree status() {
  Tree t;
  Tree& db = t.add("db");
  for (const char* k : {"clients", "subscribers", "published", "dropped", "disconnected", "idle_closed"})
    db.add(k, "1");
  return t;
}

std::string frame(Kind k, const Tree& t) { return ipc::encodeFrame(k, t.text()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  std::vector<std::string> seeds;
  for (const char* m : {"hello", "get", "status", "kill"}) seeds.push_back(frame(Kind::Request, request(m, "")));
  seeds.push_back(frame(Kind::Request, request("detail", "joined")));
  seeds.push_back(frame(Kind::Request, request("show", "joined")));
  seeds.push_back(frame(Kind::Request, request("adhoc", "SELECT sensorA[0]*2 STREAM t FROM sensorA")));
  seeds.push_back(frame(Kind::Request, request("remove", "t")));
  seeds.push_back(frame(Kind::Reply, dbValue("world")));
  seeds.push_back(frame(Kind::Reply, streamList()));
  seeds.push_back(frame(Kind::Reply, detail()));
  seeds.push_back(frame(Kind::Reply, status()));
  seeds.push_back(frame(Kind::Reply, dbValue("OK")));
  seeds.push_back(frame(Kind::Error, dbValue("error: unknown stream: \"x y\"\t{}\\;")));
  seeds.push_back(frame(Kind::Data, data({"21", "55", "1013.25"}, "000")));
  seeds.push_back(frame(Kind::Data, data({"", "7", ""}, "101")));
  seeds.push_back(frame(Kind::Data, endMarker("shutdown", "")));
  seeds.push_back(frame(Kind::Data, endMarker("removed", "t")));
  // A subscription as it arrives: data messages back to back, then the end.
  seeds.push_back(frame(Kind::Data, data({"21", "55", "1013.25"}, "000")) +
                  frame(Kind::Data, data({"22", "54", "1013"}, "000")) + frame(Kind::Data, endMarker("shutdown", "")));
  // A reply with data messages around it (the client keeps those for later).
  seeds.push_back(frame(Kind::Data, data({"1", "2", "3"}, "010")) + frame(Kind::Reply, streamList()));
  const unsigned char pieces[] = {255, 0, 11, 3};
  int n = 0;
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::string path = out + "/wire-" + std::to_string(i) + ".bin";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
      std::perror(path.c_str());
      return 1;
    }
    std::fputc(pieces[i % 4], f);
    std::fwrite(seeds[i].data(), 1, seeds[i].size(), f);
    std::fclose(f);
    ++n;
  }
  std::printf("fuzz_seeds: wrote %d IPC streams into %s\n", n, out.c_str());
  return 0;
}
