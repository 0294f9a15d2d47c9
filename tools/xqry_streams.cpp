// xqry's stream commands (xqry_commands.hpp): the stream list (-d table or JSON
// lines, -y YAML) and one stream's detail (-t), with the schema a detail reply holds.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "xqry_commands.hpp"

namespace xqry {

namespace {

const ipc::Tree& streamsOf(const ipc::Tree& get) {
  const ipc::Tree* s = get.path("db.stream");
  if (!s) throw std::runtime_error("No such node (db.stream)");  // also an idle instance's reply (the reference's)
  return *s;
}

std::string idOf(const std::pair<std::string, ipc::Tree>& e) {
  return e.second.value.empty() ? e.first : e.second.value;
}

int cmdDirJson(const ipc::Tree& streams) {
  Json list = Json::array();
  for (auto& e : streams.children) {
    Json i;
    i["name"] = idOf(e);
    i["delta"] = e.second.get("duration");
    list.push_back(std::move(i));
  }
  Json j = event("streams");
  j["streams"] = std::move(list);
  outJson(j);
  return kExitOk;
}

int notFound(const Options& o) {
  gLog("not found");
  if (o.format == Format::Jsonl) jsonError("unknown_stream", o.detail);
  return kExitNotFound;
}

}  // namespace

Schema schemaOf(const ipc::Tree& d) {
  Schema s;
  s.delta = d.get("db.duration");
  s.query = d.get("db.processed_line");
  const ipc::Tree* f = d.path("db.field");
  const ipc::Tree* ft = d.path("db.field_type");
  if (f)
    for (auto& [name, t] : f->children) {
      const ipc::Tree* ty = ft ? ft->child(name) : nullptr;
      s.fields.emplace_back(name, ty ? ty->value : "");
    }
  for (auto& [name, type] : s.fields) {
    int n = 1;
    size_t b = type.find('[');
    if (b != std::string::npos && type.compare(0, 6, "STRING") != 0) n = std::max(1, atoi(type.c_str() + b + 1));
    if (n == 1) s.elements.push_back(name);
    else
      for (int k = 0; k < n; ++k) s.elements.push_back(fmt::format("{}[{}]", name, k));
  }
  return s;
}

int cmdDir(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  const ipc::Tree& streams = streamsOf(r);
  if (o.format == Format::Jsonl) return cmdDirJson(streams);
  std::vector<std::array<std::string, 6>> rows;
  for (auto& e : streams.children)
    rows.push_back({idOf(e), e.second.get("duration"), e.second.get("size"), e.second.get("count"),
                    e.second.get("location"), e.second.get("cap")});
  size_t w[6] = {};
  for (auto& row : rows)
    for (int k = 0; k < 6; ++k) w[k] = std::max(w[k], row[size_t(k)].size());
  std::string text;
  for (auto& row : rows) {
    text += '|';
    for (int k = 0; k < 6; ++k) text += fmt::format("{:>{}}|", row[size_t(k)], w[k]);
    text += '\n';
  }
  out(text);
  return kExitOk;
}

int cmdDirYaml(Session& s, const Options&) {
  ipc::Tree r;
  s.ask("get", "", r);
  Json list = Json::array();
  for (auto& e : streamsOf(r).children) {
    Json i;
    i["name"] = idOf(e);
    i["delta"] = e.second.get("duration");
    if (const std::string size = e.second.get("size"); size != "-1") i["size"] = size;
    i["count"] = e.second.get("count");
    if (const std::string loc = e.second.get("location"); !loc.empty()) i["location"] = loc;
    list.push_back(std::move(i));
  }
  Json doc = yamlDocument();
  doc["streams"] = std::move(list);
  outYaml(doc);
  return kExitOk;
}

int cmdDetail(Session& s, const Options& o) {
  ipc::Tree r;
  s.ask("get", "", r);
  if (!streamsOf(r).child(o.detail)) return notFound(o);
  ipc::Tree d;
  s.ask("detail", o.detail, d);
  if (!d.path("db.stream")) return notFound(o);
  const Schema sc = schemaOf(d);
  if (o.format == Format::Jsonl) {
    outJson(schemaEvent(o.detail, sc));
    return kExitOk;
  }
  Json stream;
  stream["name"] = d.get("db.stream");
  stream["delta"] = sc.delta;
  // RATIONAL results rounded to the nearest representable fraction (shown when any were).
  if (const std::string rounded = d.get("db.rounded"); !rounded.empty() && rounded != "0") stream["rounded"] = rounded;
  // DEVICE sources: records read and records NULL for want of data by the deadline.
  if (d.path("db.misses")) {
    stream["reads"] = d.get("db.reads");
    stream["misses"] = d.get("db.misses");
  }
  // Values out of their type's range (stored NULL), MQTT sources and PUBLISH sinks (docs/connectors.md).
  for (const char* key : {"out_of_range", "down_records", "connected", "received", "malformed", "dropped", "published",
                          "publish_dropped", "publish_queued"})
    if (d.path(std::string("db.") + key)) stream[key] = d.get(std::string("db.") + key);
  Json fields = Json::object();
  for (auto& [name, type] : sc.fields) {
    Json field;
    field["type"] = type;
    appendEntry(fields, o.detail + "." + name, std::move(field));
  }
  Json doc = yamlDocument();
  doc["stream"] = std::move(stream);
  doc["query"] = sc.query;
  doc["fields"] = std::move(fields);
  outYaml(doc);
  return kExitOk;
}

}  // namespace xqry
