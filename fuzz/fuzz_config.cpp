// libFuzzer target: the TOML configuration file (tools::loadConfig with an
// explicit file, as `xretractor --config FILE` and `xqry --config FILE` read
// it). std::runtime_error ("Configuration error: ...") is the documented
// outcome of a bad file. A file that loads must give settings in their
// documented ranges: every count and timeout at least 1, the history budget
// within 1 .. 2^30 MiB, storage.dir empty or ending in '/', the default
// retention unset or two positive numbers, sources.timeout_s within 0 ..
// 86400 s (0 with its error when the value was invalid).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "tools/config.hpp"

namespace {

constexpr const char* kName = "fuzz_config";

void positive(int v, const char* key) { fuzz::check(v >= 1, kName, std::string(key) + " = " + std::to_string(v)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::TempDir& dir = fuzz::tempDir();
  const std::string path = dir.file("retractor.toml");
  fuzz::writeFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const tools::Config c = tools::loadConfig(path);
    positive(c.queueBufferSeconds, "ipc.queue_buffer_seconds");
    positive(c.minQueueElements, "ipc.min_queue_elements");
    positive(c.maxClients, "ipc.max_clients");
    positive(c.clientIdleTimeoutMs, "ipc.client_idle_timeout_ms");
    positive(c.clientResponseMaxFails, "ipc.client_response_max_fails");
    positive(c.serverStartupWaitS, "timing.server_startup_wait_s");
    positive(c.serverStartupPollMs, "timing.server_startup_poll_ms");
    positive(c.queryNoDataTimeoutMs, "timing.query_no_data_timeout_ms");
    fuzz::check(c.historyMemoryMib >= 1 && c.historyMemoryMib <= (int64_t(1) << 30), kName,
                "limits.history_memory_mib = " + std::to_string(c.historyMemoryMib));
    fuzz::check(c.storageDir.empty() || c.storageDir.back() == '/', kName, "storage.dir without a trailing '/'");
    const auto [capacity, segments] = c.defaultRetention;
    fuzz::check((capacity == 0 && segments == 0) || (capacity >= 1 && segments >= 1), kName,
                "storage.default_retention = [" + std::to_string(capacity) + ", " + std::to_string(segments) + "]");
    fuzz::check(c.sourcesTimeoutS >= 0 && c.sourcesTimeoutS <= 86400, kName,
                "sources.timeout_s = " + std::to_string(c.sourcesTimeoutS));
    fuzz::check(c.sourcesTimeoutError.empty() || c.sourcesTimeoutS == 0, kName, "an invalid sources.timeout_s kept");
    try {
      tools::validateSourcesTimeout(c);
      fuzz::check(c.sourcesTimeoutError.empty(), kName, "an invalid sources.timeout_s passed the check");
    } catch (const std::runtime_error& e) {
      fuzz::check(std::string(e.what()).rfind("Configuration error: sources.timeout_s ", 0) == 0, kName,
                  std::string("sources.timeout_s message: ") + e.what());
    }
  } catch (const std::runtime_error& e) {
    fuzz::note(kName, "runtime_error", e.what());
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
