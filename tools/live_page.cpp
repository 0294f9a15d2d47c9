#include "tools/live_page.hpp"

#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "ipc/ipc.hpp"

namespace tools {

namespace {

using Json = nlohmann::json;

// One data message of a subscription as the page's JSON.
Json recordJson(const ipc::Tree& m) {
  std::vector<std::string> text;
  std::vector<bool> nulls;
  ipc::recordOf(m, text, nulls);
  Json values = Json::array();
  for (size_t k = 0; k < text.size(); ++k) values.push_back(nulls[k] ? Json() : Json(text[k]));
  Json j;
  j["values"] = std::move(values);
  if (const ipc::Tree* n = m.path("n")) j["n"] = atoll(n->value.c_str());
  if (const ipc::Tree* t = m.path("t")) {  // "p/q" seconds as a number
    const std::string& text = t->value;
    const size_t slash = text.find('/');
    j["t"] = slash == std::string::npos ? atof(text.c_str())
                                        : atof(text.substr(0, slash).c_str()) / atof(text.substr(slash + 1).c_str());
  }
  return j;
}

}  // namespace

struct LivePage::Impl {
  httplib::Server http;
  std::thread thread;
  std::string socket;
  std::atomic<bool> stopping{false};
};

LivePage::LivePage(const std::string& hostPort, const std::string& socketPath, const std::string& webDir)
    : impl_(new Impl) {
  Impl& m = *impl_;
  m.socket = socketPath;
  const size_t colon = hostPort.rfind(':');
  const std::string host = hostPort.substr(0, colon);
  const int port = atoi(hostPort.substr(colon + 1).c_str());
  if (!m.http.set_mount_point("/", webDir) || !m.http.set_mount_point("/uplot", webDir + "/node_modules/uplot/dist"))
    throw std::runtime_error("--http: the page's files are not in " + webDir + " (tools/setup.sh installs them)");
  m.http.Get("/streams", [this](const httplib::Request&, httplib::Response& res) {
    std::string err;
    auto c = ipc::Client::connect(impl_->socket, err);
    ipc::Tree r;
    Json list = Json::array();
    if (c && c->request("get", "", r, 2000, &err) == ipc::Client::Status::Ok)
      if (const ipc::Tree* s = r.path("db.stream"))
        for (auto& [key, e] : s->children) {
          Json i;
          i["name"] = e.value.empty() ? key : e.value;
          i["delta"] = e.get("duration");
          i["count"] = atoll(e.get("count").c_str());
          list.push_back(std::move(i));
        }
    res.set_content(list.dump(), "application/json");
  });
  m.http.Get("/events", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string stream = req.get_param_value("stream");
    std::string err;
    std::shared_ptr<ipc::Client> c(ipc::Client::connect(impl_->socket, err).release());
    ipc::Tree r;
    if (stream.empty() || !c || c->request("show", stream, r, 2000, &err) != ipc::Client::Status::Ok ||
        !r.get("db").empty()) {
      res.status = 404;
      res.set_content("no such stream: " + stream + "\n", "text/plain");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, c, stream](size_t, httplib::DataSink& sink) {
      while (!impl_->stopping.load()) {
        ipc::Tree msg;
        std::string e;
        const auto st = c->receive(msg, 200, &e);
        if (st == ipc::Client::Status::Timeout) {
          if (!sink.is_writable()) return false;
          continue;
        }
        if (st != ipc::Client::Status::Ok || msg.get("stream") == ipc::kEndMarker) break;
        if (msg.get("stream") != stream || msg.path("lost")) continue;
        const std::string event = "data: " + recordJson(msg).dump() + "\n\n";
        if (!sink.write(event.data(), event.size())) return false;
      }
      sink.done();
      return true;
    });
  });
  if (!m.http.bind_to_port(host, port)) throw std::runtime_error("--http " + hostPort + ": cannot listen");
  m.thread = std::thread([this] { impl_->http.listen_after_bind(); });
}

LivePage::~LivePage() {
  impl_->stopping = true;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace tools
