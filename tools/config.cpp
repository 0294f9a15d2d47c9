#include "config.hpp"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace tools {

namespace {

constexpr double kMaxSourcesTimeoutS = 86400;

Config gLoaded;

// A value as the file wrote it, for messages.
std::string text(toml::node_view<const toml::node> v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void apply(Config& c, const toml::table& t, const std::string& file) {
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
  if (auto v = t["metrics"]["listen"].value<std::string>()) c.metricsListen = *v;
  if (auto v = t["http"]["listen"].value<std::string>()) c.httpListen = *v;
  intKey("http", "max_clients", c.httpMaxClients, 1, 64);
  if (auto v = t["mqtt"]["user"].value<std::string>()) c.mqttUser = *v;
  if (auto v = t["mqtt"]["password"].value<std::string>()) c.mqttPassword = *v;
  if (auto v = t["mqtt"]["ca_file"].value<std::string>()) c.mqttCaFile = *v;
  intKey("mqtt", "keepalive_s", c.mqttKeepAliveS, 1, 5);
  intKey("mqtt", "drain_s", c.mqttDrainS, 0, 5);
  // A whole number in [lo, hi], else a warning and the default stays.
  auto rangedKey = [&](const char* sect, const char* key, auto& out, int64_t lo, int64_t hi) {
    auto node = t[sect][key];
    if (!node) return;
    auto v = node.value_exact<int64_t>();
    if (v && *v >= lo && *v <= hi) {
      out = std::remove_reference_t<decltype(out)>(*v);
      return;
    }
    c.warnings.push_back(file + ": " + sect + "." + key + " must be a whole number from " + std::to_string(lo) +
                         " to " + std::to_string(hi) + ", got " + text(node) + "; using " + std::to_string(out));
  };
  rangedKey("mqtt", "buffer_records", c.mqttBufferRecords, 1, 100000000);
  // A source payload over either limit is malformed; a record is small and flat.
  rangedKey("mqtt", "max_payload_bytes", c.mqttMaxPayloadBytes, 16, 268435455);  // the most an MQTT packet holds
  rangedKey("mqtt", "max_json_depth", c.mqttMaxJsonDepth, 1, 1000);
  // An invalid budget warns and keeps the default (the book's rule; not a hard error).
  if (auto node = t["limits"]["history_memory_mib"]; node) {
    auto v = node.value_exact<int64_t>();
    if (v && *v >= 1 && *v <= (int64_t(1) << 30)) {
      c.historyMemoryMib = *v;
    } else {
      c.historyMemoryMib = 1024;
      c.warnings.push_back(file + ": limits.history_memory_mib must be a whole number of MiB from 1 to 2^30, got " +
                           text(node) + "; using 1024");
    }
  }
  if (auto node = t["storage"]["default_retention"]; node) {
    const toml::array* a = node.as_array();
    std::optional<int64_t> cap, segs;
    if (a && a->size() == 2) cap = (*a)[0].value_exact<int64_t>(), segs = (*a)[1].value_exact<int64_t>();
    auto positive = [](std::optional<int64_t> n) { return n && *n >= 1 && *n <= INT32_MAX; };
    if (positive(cap) && positive(segs)) {
      c.defaultRetention = {int(*cap), int(*segs)};
    } else {
      c.defaultRetention = {0, 0};
      c.warnings.push_back(file +
                           ": storage.default_retention must be [capacity, segments], two whole numbers from 1 to "
                           "2147483647, got " +
                           text(node) + "; ignored");
    }
  }
  if (auto node = t["run"]["checkpoint_s"]; node) {
    std::optional<double> v;
    if (node.is_integer()) v = double(*node.value<int64_t>());
    else if (node.is_floating_point()) v = *node.value<double>();
    if (v && std::isfinite(*v) && *v >= 0 && *v <= 86400) c.runCheckpointS = *v;
    else
      c.warnings.push_back(file + ": run.checkpoint_s must be from 0 to 86400 seconds, got " + text(node) +
                           "; ignored");
  }
  if (auto node = t["run"]["resume"]; node) {
    if (node.is_boolean()) c.runResume = *node.value<bool>();
    else c.warnings.push_back(file + ": run.resume must be true or false, got " + text(node) + "; ignored");
  }
  if (auto node = t["sources"]["timeout_s"]; node) {
    // A number of seconds, integer or not; checked by validateSourcesTimeout().
    std::optional<double> v;
    if (node.is_integer()) v = double(*node.value<int64_t>());
    else if (node.is_floating_point()) v = *node.value<double>();
    c.sourcesTimeoutError.clear();
    if (!v || !std::isfinite(*v)) {
      c.sourcesTimeoutS = 0;
      c.sourcesTimeoutError = "must be a number of seconds, got " + text(node);
    } else if (*v < 0 || *v > kMaxSourcesTimeoutS) {
      c.sourcesTimeoutS = 0;
      c.sourcesTimeoutError = "must be from 0 to 86400 seconds, got " + text(node);
    } else {
      c.sourcesTimeoutS = *v;
    }
  }
}

}  // namespace

Config loadConfig(const std::optional<std::string>& explicitFile) {
  Config c;
  if (explicitFile) {
    try {
      apply(c, toml::parse_file(*explicitFile), *explicitFile);
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
        apply(c, toml::parse_file(f), f);
      } catch (const toml::parse_error& e) {
        fprintf(stderr, "warning: configuration %s skipped: %s\n", f.c_str(), std::string(e.description()).c_str());
      }
    }
  }
  if (!c.storageDir.empty() && c.storageDir.back() != '/') c.storageDir += '/';
  gLoaded = c;
  return c;
}

const Config& loadedConfig() { return gLoaded; }

void validateSourcesTimeout(const Config& c) {
  if (!c.sourcesTimeoutError.empty())
    throw std::runtime_error("Configuration error: sources.timeout_s " + c.sourcesTimeoutError);
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
