// Layered TOML configuration shared by the programs (toml++).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tools {

struct Config {
  std::string storageDir;  // storage.dir, normalised with a trailing '/'; empty = unset
  int queueBufferSeconds = 10;
  int minQueueElements = 100;
  int maxClients = 128;            // ipc.max_clients: connections the engine serves at once
  int clientIdleTimeoutMs = 5000;  // ipc.client_idle_timeout_ms: a silent connection is closed
  int clientResponseMaxFails = 300;
  int serverStartupWaitS = 30;
  int serverStartupPollMs = 100;
  int queryNoDataTimeoutMs = 10000;
  std::string lockDir;              // empty = the temp directory
  int64_t historyMemoryMib = 1024;  // limits.history_memory_mib: all history rings together
  // storage.default_retention = [capacity, segments]: RETENTION of DEFAULT and
  // DIRECT file streams without their own (substrates included); {0, 0} = unset.
  std::pair<int, int> defaultRetention{0, 0};
  // sources.timeout_s: the read deadline of DEVICE sources, in seconds (0 = none).
  // Checked by validateSourcesTimeout(), not at load (xqry reads the file too).
  double sourcesTimeoutS = 0;
  // [run]: checkpoint_s (seconds between checkpoints, 0: none; unset: the
  // engine's default) and resume (go on from the checkpoint at start).
  std::optional<double> runCheckpointS;
  bool runResume = false;
  std::string sourcesTimeoutError;  // why the value is not a valid timeout; empty when it is
  // [mqtt]: credentials and limits of MQTT sources and PUBLISH sinks (never in the query text).
  std::string mqttUser, mqttPassword, mqttCaFile;
  int64_t mqttBufferRecords = 10000;      // mqtt.buffer_records: a sink's outage buffer
  int mqttKeepAliveS = 5;                 // mqtt.keepalive_s
  int64_t mqttMaxPayloadBytes = 1 << 20;  // mqtt.max_payload_bytes: a longer source payload is malformed
  int mqttMaxJsonDepth = 32;              // mqtt.max_json_depth: so is JSON nested deeper
  int mqttDrainS = 5;
  std::string httpListen;     // http.listen: HOST:PORT of the live page (empty: off)
  int httpMaxClients = 64;    // http.max_clients: live plots (SSE streams) the page serves at once
  std::string metricsListen;  // metrics.listen: HOST:PORT of /metrics (empty: off)                 // mqtt.drain_s: a
                              // sink's last records at the end of a run
  std::vector<std::string> warnings;  // invalid values that fell back to their defaults
};

// Loads /etc/retractor/retractor.toml, then the user's file; with `explicitFile`
// only that file. Throws std::runtime_error with a message for the user.
Config loadConfig(const std::optional<std::string>& explicitFile);

// What the last loadConfig() returned: the live page reads its [http] limits here.
const Config& loadedConfig();

// sources.timeout_s must be a number of seconds from 0 to 86400 (xretractor).
// Throws std::runtime_error("Configuration error: sources.timeout_s ...").
void validateSourcesTimeout(const Config& c);

// storage.dir must exist, be a directory and be writable.
// Throws std::runtime_error("Configuration error: ...").
void validateStorageDir(const Config& c);

}  // namespace tools
