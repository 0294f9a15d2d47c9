#include "tools/live_page.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ipc/ipc.hpp"
#include "tools/config.hpp"

namespace tools {

namespace {

using Json = nlohmann::json;

// One data message of a subscription as the page's JSON (liveEventJson).
std::string recordJson(const ipc::Tree& m) {
  std::vector<std::string> text;
  std::vector<bool> nulls;
  ipc::recordOf(m, text, nulls);
  const ipc::Tree* n = m.path("n");
  const ipc::Tree* t = m.path("t");
  return liveEventJson(text, nulls, n ? n->value : "", t ? t->value : "");
}

// Connection threads made on demand, at most `max`. httplib's default pool
// has 8 and an SSE stream holds its thread as long as the browser watches, so
// eight plots (or a few half-sent requests) left nothing for anyone else.
class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(size_t max) : max_(max) {}
  void enqueue(std::function<void()> fn) override {
    std::lock_guard lk(mu_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && threads_.size() < max_) threads_.emplace_back([this] { work(); });
    cv_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard lk(mu_);
      down_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  void work() {
    std::unique_lock lk(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lk, [this] { return down_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // shut down with nothing left to serve
      auto fn = std::move(jobs_.front());
      jobs_.pop_front();
      lk.unlock();
      fn();
      lk.lock();
    }
  }
  const size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool down_ = false;
};

// Threads beyond the SSE streams: for /, /streams, uPlot, a 503, and requests
// still being read (a half-sent one holds a thread until the read timeout).
constexpr size_t kRequestThreads = 32;
constexpr int kReadTimeoutS = 2;

}  // namespace

struct LivePage::Impl {
  httplib::Server http;
  std::thread thread;
  std::string socket;
  std::atomic<bool> stopping{false};
  int maxStreams = 64;          // http.max_clients
  std::atomic<int> streams{0};  // SSE streams being served
  int listenFd = -1;
};

LivePage::LivePage(const std::string& hostPort, const std::string& socketPath, const std::string& webDir)
    : impl_(new Impl) {
  Impl& m = *impl_;
  m.socket = socketPath;
  m.maxStreams = loadedConfig().httpMaxClients;
  const size_t threads = size_t(m.maxStreams) + kRequestThreads;
  m.http.new_task_queue = [threads] { return new ConnectionPool(threads); };
  // A request comes whole from a browser; one that does not arrive, or an
  // idle kept-alive connection, gives its thread back soon.
  m.http.set_read_timeout(kReadTimeoutS, 0);
  m.http.set_keep_alive_timeout(kReadTimeoutS);
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
    res.set_content(list.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
  });
  m.http.Get("/events", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string stream = req.get_param_value("stream");
    if (stream.empty()) {
      res.status = 404;
      res.set_content("no stream given: /events?stream=NAME\n", "text/plain");
      return;
    }
    // A slot for this stream, given back when the response (and its provider) goes.
    std::shared_ptr<std::atomic<int>> slot(&impl_->streams, [](std::atomic<int>* n) { --*n; });
    if (++impl_->streams > impl_->maxStreams) {
      res.status = 503;
      res.set_header("Retry-After", "5");
      res.set_content("too many live plots: this page serves at most " + std::to_string(impl_->maxStreams) +
                          " at once (http.max_clients); close one and retry\n",
                      "text/plain");
      return;
    }
    std::string err;
    std::shared_ptr<ipc::Client> c(ipc::Client::connect(impl_->socket, err).release());
    ipc::Tree r;
    if (!c || c->request("show", stream, r, 2000, &err) != ipc::Client::Status::Ok) {
      res.status = 503;  // the engine refused (ipc.max_clients) or does not answer
      res.set_content("the engine did not take the subscription: " + err + "\n", "text/plain");
      return;
    }
    if (!r.get("db").empty()) {
      res.status = 404;
      res.set_content("no such stream: " + stream + "\n", "text/plain");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, c, stream, slot](size_t, httplib::DataSink& sink) {
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
        const std::string event = "data: " + recordJson(msg) + "\n\n";
        if (!sink.write(event.data(), event.size())) return false;
      }
      sink.done();
      return true;
    });
  });
  // Debian's httplib (0.11.4) listens with a backlog of 5, compiled in: a
  // burst of connections beyond it waits for SYN retries (1 s, then 3 s).
  // listen() again on the bound socket raises it.
  m.http.set_socket_options([&m](socket_t sock) {
    httplib::default_socket_options(sock);
    m.listenFd = sock;
  });
  if (!m.http.bind_to_port(host, port)) throw std::runtime_error("--http " + hostPort + ": cannot listen");
  if (m.listenFd >= 0) ::listen(m.listenFd, SOMAXCONN);
  m.thread = std::thread([this] { impl_->http.listen_after_bind(); });
}

LivePage::~LivePage() {
  impl_->stopping = true;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace tools
