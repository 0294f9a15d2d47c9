// xqry's connection to the server (xqry_commands.hpp): connecting, waiting for
// the server with -w, requests with the configured reply timeout, and changes
// to the running plan, whose answer is awaited however long it takes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "xqry_commands.hpp"

namespace xqry {

int Session::connect() {
  const std::string path = ipc::socketPath(gConfig.lockDir, o_.server);
  std::string err;
  if (o_.waitServer) {
    const int poll = gConfig.serverStartupPollMs;
    const int attempts = std::max(1, int(int64_t(gConfig.serverStartupWaitS) * 1000 / poll));
    for (int i = 0; i < attempts && !c_; ++i) {
      c_ = ipc::Client::connect(path, err);
      if (!c_ && i + 1 < attempts) std::this_thread::sleep_for(std::chrono::milliseconds(poll));
    }
    if (!c_) {
      gLog(fmt::format("server not available after {} seconds", gConfig.serverStartupWaitS));
      if (o_.format == Format::Jsonl) jsonError("server_unavailable", "server not available");
      return kExitNoServer;
    }
    return kExitOk;
  }
  c_ = ipc::Client::connect(path, err);
  if (!c_) {
    gLog("IPC: " + err);
    if (o_.format == Format::Jsonl) jsonError("server_unavailable", err);
    return kExitNoServer;
  }
  return kExitOk;
}

ipc::Client::Status Session::ask(const std::string& message, const std::string& arg, ipc::Tree& reply) {
  reply = ipc::Tree();
  std::string err;
  auto st = request(message, arg, reply, &err);
  if (st == ipc::Client::Status::Timeout) gLog("server not found");
  else if (st != ipc::Client::Status::Ok) gLog("IPC: " + err);
  return st;
}

ipc::Client::Status Session::change(const std::string& message, const std::string& arg, ipc::Tree& reply,
                                    std::string* err) {
  reply = ipc::Tree();
  auto st = c_->request(message, arg, reply, ipc::kNoDeadline, err);
  if (st == ipc::Client::Status::Error && err->find("too many clients") != std::string::npos)
    throw TooManyClients(*err);
  return st;
}

ipc::Client::Status Session::request(const std::string& message, const std::string& arg, ipc::Tree& reply,
                                     std::string* err, const std::vector<std::pair<std::string, std::string>>& extra) {
  auto st = c_->request(message, arg, reply, replyMs(), err, extra);
  if (st == ipc::Client::Status::Error && err->find("too many clients") != std::string::npos)
    throw TooManyClients(*err);
  return st;
}

int Session::replyMs() { return int(std::min<int64_t>(int64_t(gConfig.clientResponseMaxFails) * 10, INT32_MAX)); }

}  // namespace xqry
