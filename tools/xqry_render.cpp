// xqry's output side (xqry.hpp): JSON lines and YAML written from nlohmann trees,
// and the renderer of subscribed records (raw, graphite, influxdb, gnuplot, CSV,
// JSON lines).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "storage/json_text.hpp"
#include "xqry.hpp"

namespace xqry {

namespace {

// A string as JSON text: storage::appendJsonString, where invalid UTF-8 (field
// values need not be UTF-8, where dump() throws) becomes U+FFFD and control
// characters other than \n, \r and \t are \u00xx (where dump() writes \b and \f).
void quoteTo(const std::string& s, std::string& o) { storage::appendJsonString(o, s); }

// nlohmann's compact dump() of a value, strings quoted by quoteTo.
void dumpTo(const Json& j, std::string& o) {
  if (j.is_string()) return quoteTo(j.get_ref<const std::string&>(), o);
  if (!j.is_structured()) {
    o += j.dump();
    return;
  }
  o += j.is_object() ? '{' : '[';
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it != j.begin()) o += ',';
    if (j.is_object()) quoteTo(it.key(), o), o += ':';
    dumpTo(it.value(), o);
  }
  o += j.is_object() ? '}' : ']';
}

// Block mappings of plain scalars written as they are (the reference quotes
// nothing); the first key of a list item follows its "- ".
void yamlTo(const Json& map, size_t indent, std::string& o) {
  for (auto& e : map.items()) {
    const Json& v = e.value();
    o += std::string(indent, ' ') + e.key() + (v.is_string() ? ": " + v.get<std::string>() + "\n" : ":\n");
    if (v.is_object()) yamlTo(v, indent + 2, o);
    if (v.is_array())
      for (const Json& item : v) {
        const size_t dash = o.size() + indent + 2;
        yamlTo(item, indent + 4, o);
        if (dash < o.size()) o.replace(dash, 2, "- ");
      }
  }
}

int elementCount(const std::string& type) {
  size_t b = type.find('[');
  return b == std::string::npos ? 1 : std::max(1, atoi(type.c_str() + b + 1));
}

}  // namespace

void out(const std::string& s) { fwrite(s.data(), 1, s.size(), stdout); }

std::string jsonLine(const Json& j) {
  std::string o;
  dumpTo(j, o);
  return o;
}

void outJson(const Json& j) { out(jsonLine(j) + '\n'); }

void outYaml(const Json& doc) {
  std::string o = "---\n";
  yamlTo(doc, 0, o);
  out(o);
}

Json yamlDocument() {
  Json doc;
  doc["apiVersion"] = "xqry/v1";
  return doc;
}

Json event(const char* name) {
  Json j;
  j["version"] = 1;
  j["event"] = name;
  return j;
}

void appendEntry(Json& map, const std::string& key, Json value) {
  map.get_ref<Json::object_t&>().emplace_back(key, std::move(value));
}

void jsonError(const std::string& code, const std::string& message) {
  Json j = event("error");
  j["code"] = code;
  j["message"] = message;
  outJson(j);
}

Json schemaEvent(const std::string& stream, const Schema& s) {
  Json fields = Json::array();
  for (auto& [name, type] : s.fields) {
    Json f;
    f["name"] = name;
    f["type"] = type.substr(0, type.find('['));
    f["count"] = elementCount(type);
    fields.push_back(std::move(f));
  }
  Json j = event("schema");
  j["stream"] = stream;
  j["delta"] = s.delta;
  j["query"] = s.query;
  j["fields"] = std::move(fields);
  return j;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

// ---------------------------------------------------------------- the renderer
void Renderer::start() {
  switch (o_.format) {
    case Format::Gnuplot:
      out(
          fmt::format("set term qt noraise\n"
                      "set style fill transparent solid 0.5\n"
                      "set xrange [{}]\n"
                      "set yrange [{}:{}]\n"
                      "set ticslevel 0\n"
                      "set hidden3d\n"
                      "set view 60,30\n",
                      o_.rtl ? fmt::format("{}:0", o_.gx) : fmt::format("0:{}", o_.gx), o_.gymin, o_.gymax));
      break;
    case Format::Csv: {
      std::string h = "n,t";  // logical index and slot time first
      for (size_t k = 0; k < schema_.elements.size(); ++k) h += ',' + csvField(schema_.elements[k]);
      out(h + "\n");
      break;
    }
    case Format::Jsonl: outJson(schemaEvent(stream_, schema_)); break;
    default: break;
  }
}

void Renderer::record(const std::vector<std::string>& v, const std::vector<bool>& null, const std::string& n,
                      const std::string& t) {
  n_ = n;
  t_ = t;
  switch (o_.format) {
    case Format::Raw: out(raw(v, null)); break;
    case Format::Graphite: out(graphite(v, null)); break;
    case Format::Influx: out(influx(v, null)); break;
    case Format::Gnuplot: out(gnuplot(v, null)); break;
    case Format::Csv: out(csv(v, null)); break;
    case Format::Jsonl: outJson(jsonl(v, null)); break;
  }
}

void Renderer::lost(const std::string& count) {
  if (o_.format != Format::Jsonl) return;
  Json j = event("lost");
  j["stream"] = stream_;
  j["count"] = std::stoll(count);
  outJson(j);
}

void Renderer::end(const std::string& reason) {
  if (o_.format != Format::Jsonl) return;
  Json j = event("end");
  j["reason"] = reason;
  outJson(j);
}

std::string Renderer::name(size_t k) const {
  return k < schema_.elements.size() ? schema_.elements[k] : fmt::format("f{}", k);
}

std::string Renderer::raw(const std::vector<std::string>& v, const std::vector<bool>& null) const {
  bool allNull = !v.empty();
  for (bool n : null) allNull = allNull && n;
  if (o_.skipNull && allNull) return "";
  std::string text;
  for (size_t k = 0; k < v.size(); ++k) text += (null[k] ? std::string("null") : v[k]) + ' ';
  return text + "\r\n";
}

std::string Renderer::graphite(const std::vector<std::string>& v, const std::vector<bool>& null) const {
  const auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string text;
  for (size_t k = 0; k < v.size(); ++k)
    if (!null[k]) text += fmt::format("{}.{} {} {}\n", stream_, name(k), v[k], secs);
  return text;
}

std::string Renderer::influx(const std::vector<std::string>& v, const std::vector<bool>& null) const {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string f;
  for (size_t k = 0; k < v.size(); ++k)
    if (!null[k]) f += fmt::format("{}{}={}", f.empty() ? "" : ",", name(k), v[k]);
  return f.empty() ? "" : fmt::format("{} {} {}\n", stream_, f, ns);
}

std::string Renderer::gnuplot(const std::vector<std::string>& v, const std::vector<bool>& null) {
  static const char* colors[] = {"red",   "blue", "green",  "orange", "purple",
                                 "brown", "pink", "yellow", "cyan",   "magenta"};
  if (history_.size() < v.size()) history_.resize(v.size());
  for (size_t k = 0; k < v.size(); ++k) {
    history_[k].push_front(null[k] ? "NaN" : v[k]);
    while (history_[k].size() > size_t(o_.gx)) history_[k].pop_back();
  }
  std::string text = "plot";
  for (size_t k = 0; k < v.size(); ++k) {
    std::string n = name(k);
    std::replace(n.begin(), n.end(), '_', '-');
    text += fmt::format("{} '-' u 1:2 t '[{}]' w lines lc rgb '{}'", k ? "," : "", n, colors[k % 10]);
  }
  text += "\r\n";
  for (size_t k = 0; k < v.size(); ++k) {
    for (size_t j = 0; j < history_[k].size(); ++j) text += fmt::format("{} {}\r\n", j, history_[k][j]);
    text += "e\r\n";
  }
  return text;
}

std::string Renderer::csv(const std::vector<std::string>& v, const std::vector<bool>& null) const {
  std::string text = n_ + "," + t_;
  for (size_t k = 0; k < v.size(); ++k) {
    text += ',';
    if (!null[k]) text += csvField(v[k]);
  }
  return text + "\n";
}

Json Renderer::jsonl(const std::vector<std::string>& v, const std::vector<bool>& null) const {
  return recordEvent(stream_, v, null, n_, t_);
}

Json recordEvent(const std::string& stream, const std::vector<std::string>& v, const std::vector<bool>& null,
                 const std::string& n, const std::string& t) {
  Json values = Json::array();
  for (size_t k = 0; k < v.size(); ++k) values.push_back(k < null.size() && null[k] ? Json() : Json(v[k]));
  Json j = event("record");
  j["stream"] = stream;
  if (!n.empty()) j["n"] = std::stoll(n);
  if (!t.empty()) {  // seconds as a number, and exactly
    const size_t slash = t.find('/');
    j["t"] = slash == std::string::npos
                 ? double(std::stoll(t))
                 : double(std::stoll(t.substr(0, slash))) / double(std::stoll(t.substr(slash + 1)));
    j["t_exact"] = t;
  }
  j["values"] = std::move(values);
  return j;
}

}  // namespace xqry
