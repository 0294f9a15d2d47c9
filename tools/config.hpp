// Layered TOML configuration shared by the programs (toml++).
#pragma once

#include <optional>
#include <string>

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
};

// Loads /etc/retractor/retractor.toml, then the user's file; with `explicitFile`
// only that file. Throws std::runtime_error with a message for the user.
Config loadConfig(const std::optional<std::string>& explicitFile);

// storage.dir must exist, be a directory and be writable.
// Throws std::runtime_error("Configuration error: ...").
void validateStorageDir(const Config& c);

}  // namespace tools
