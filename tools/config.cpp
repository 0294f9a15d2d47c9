#include "config.hpp"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace tools {

namespace {

void apply(Config& c, const toml::table& t) {
  if (auto v = t["storage"]["dir"].value<std::string>()) c.storageDir = *v;
  auto intKey = [&](const char* sect, const char* key, int& out, int lo, int def) {
    // Above 2^31-1 the largest int (a cast wrapped 4294967296 to 0, or negative).
    if (auto v = t[sect][key].value<int64_t>()) out = *v >= lo ? int(std::min<int64_t>(*v, INT32_MAX)) : def;
  };
  intKey("ipc", "queue_buffer_seconds", c.queueBufferSeconds, 1, 10);
  intKey("ipc", "min_queue_elements", c.minQueueElements, 1, 100);
  intKey("ipc", "max_clients", c.maxClients, 1, 128);
  intKey("ipc", "client_idle_timeout_ms", c.clientIdleTimeoutMs, 1, 5000);
  intKey("ipc", "client_response_max_fails", c.clientResponseMaxFails, 1, 300);
  intKey("timing", "server_startup_wait_s", c.serverStartupWaitS, 1, 30);
  intKey("timing", "server_startup_poll_ms", c.serverStartupPollMs, 1, 100);
  intKey("timing", "query_no_data_timeout_ms", c.queryNoDataTimeoutMs, 1, 10000);
  if (auto v = t["paths"]["lock_dir"].value<std::string>()) c.lockDir = *v;
  if (auto v = t["limits"]["history_memory_mib"].value<int64_t>()) {
    if (*v < 1 || *v > (int64_t(1) << 30))
      throw std::runtime_error("Configuration error: limits.history_memory_mib must be between 1 and 2^30, got " +
                               std::to_string(*v));
    c.historyMemoryMib = *v;
  }
}

}  // namespace

Config loadConfig(const std::optional<std::string>& explicitFile) {
  Config c;
  if (explicitFile) {
    try {
      apply(c, toml::parse_file(*explicitFile));
    } catch (const toml::parse_error& e) {
      throw std::runtime_error("Configuration error: " + *explicitFile + ": " + std::string(e.description()));
    }
  } else {
    std::vector<std::string> layers = {"/etc/retractor/retractor.toml"};
    if (const char* x = getenv("XDG_CONFIG_HOME"); x && *x)
      layers.push_back(std::string(x) + "/retractor/retractor.toml");
    else if (const char* h = getenv("HOME"); h && *h)
      layers.push_back(std::string(h) + "/.config/retractor/retractor.toml");
    for (auto& f : layers) {
      std::error_code ec;
      if (!std::filesystem::exists(f, ec)) continue;
      try {
        apply(c, toml::parse_file(f));
      } catch (const toml::parse_error& e) {
        fprintf(stderr, "warning: configuration %s skipped: %s\n", f.c_str(), std::string(e.description()).c_str());
      }
    }
  }
  if (!c.storageDir.empty() && c.storageDir.back() != '/') c.storageDir += '/';
  return c;
}

void validateStorageDir(const Config& c) {
  if (c.storageDir.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(c.storageDir);
  if (!fs::exists(p, ec)) {
    if (ec)
      throw std::runtime_error("Configuration error: cannot access storage.dir '" + c.storageDir +
                               "': " + ec.message());
    throw std::runtime_error("Configuration error: storage.dir does not exist: " + c.storageDir);
  }
  if (!fs::is_directory(p, ec))
    throw std::runtime_error("Configuration error: storage.dir is not a directory: " + c.storageDir);
  // A real probe: permission bits do not tell the whole story (root, ACLs, read-only mounts).
  std::string probe = (p / (".write_probe_" + std::to_string(getpid()))).string();
  FILE* f = fopen(probe.c_str(), "w");
  if (!f) throw std::runtime_error("Configuration error: storage.dir is not writable: " + c.storageDir);
  fclose(f);
  std::remove(probe.c_str());
}

}  // namespace tools
