// What xqry's command side (xqry.cpp, xqry_commands.hpp) and its output side
// (xqry_render.cpp) share: the options, a stream's schema, the output primitives
// (stdout, JSON lines and YAML from nlohmann trees) and the renderer of subscribed records.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace xqry {

enum class Format { Raw, Graphite, Influx, Gnuplot, Csv, Jsonl };

struct Options {
  std::string select = "none", detail, adhoc, gnuplot, config, server, remove, reset;
  int64_t limit = 0;
  int64_t from = -1;     // -s --from N: replay from record N (or wait for it), then live
  std::string fromText;  // --from as given; checked by fromIndex() (xqry.cpp)
  bool fromGiven = false;
  bool skipNull = false, hello = false, kill = false, dir = false, diryaml = false, raw = false, graphite = false,
       influx = false, rtl = false, needCtrlC = false, waitServer = false, csv = false, jsonl = false, stats = false;
  Format format = Format::Raw;
  int gx = 0, gymin = 0, gymax = 0;  // gnuplot window
};

// Field names and types from a `detail` reply, expanded to one name per flat element.
struct Schema {
  std::string delta, query;
  std::vector<std::pair<std::string, std::string>> fields;  // name, TYPE
  std::vector<std::string> elements;
};

using Json = nlohmann::ordered_json;

// stdout is unbuffered: one write per rendered record or table.
void out(const std::string& s);
// The compact JSON text of j, strings as storage::appendJsonString writes them
// (invalid UTF-8 as U+FFFD): valid JSON whatever bytes the strings hold.
std::string jsonLine(const Json& j);
void outJson(const Json& j);    // one line: jsonLine(j)
void outYaml(const Json& doc);  // "---", then doc as YAML
Json yamlDocument();            // a YAML document's root: apiVersion xqry/v1, then what is added
Json event(const char* name);   // a JSON-lines event: {"version":1,"event":name}
// Appends key: value to the object `map` even when the key is there already: a
// mapping taken from a reply keeps every entry (a DECLARE may name two fields alike).
void appendEntry(Json& map, const std::string& key, Json value);
void jsonError(const std::string& code, const std::string& message);
Json schemaEvent(const std::string& stream, const Schema& s);
// A `record` event: the values as text (null for NULL); `n` and `t` ("p/q"
// seconds) as the server sent them, left out when empty.
Json recordEvent(const std::string& stream, const std::vector<std::string>& values, const std::vector<bool>& nulls,
                 const std::string& n, const std::string& t);
std::string csvField(const std::string& s);

// Renders the records of one subscription in the chosen format.
class Renderer {
 public:
  Renderer(const Options& o, std::string stream, Schema schema)
      : o_(o), stream_(std::move(stream)), schema_(std::move(schema)) {}

  void start();
  // `n`, `t`: the record's logical index and slot time ("p/q" seconds) when
  // the server sent them; CSV and JSON lines carry them.
  void record(const std::vector<std::string>& v, const std::vector<bool>& null, const std::string& n = "",
              const std::string& t = "");
  void lost(const std::string& count);  // JSON lines: a `lost` event
  void end(const std::string& reason);

 private:
  std::string name(size_t k) const;
  std::string raw(const std::vector<std::string>& v, const std::vector<bool>& null) const;
  std::string graphite(const std::vector<std::string>& v, const std::vector<bool>& null) const;
  std::string influx(const std::vector<std::string>& v, const std::vector<bool>& null) const;
  std::string gnuplot(const std::vector<std::string>& v, const std::vector<bool>& null);
  std::string csv(const std::vector<std::string>& v, const std::vector<bool>& null) const;
  Json jsonl(const std::vector<std::string>& v, const std::vector<bool>& null) const;

  const Options& o_;
  std::string stream_;
  Schema schema_;
  std::vector<std::deque<std::string>> history_;  // gnuplot: newest first
  std::string n_, t_;                             // of the record being rendered
};

}  // namespace xqry
