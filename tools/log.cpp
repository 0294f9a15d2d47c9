// The tools' diagnostics sink (log.hpp).
#include "log.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

namespace tools {

void LogSink::operator()(const std::string& m) const {
  if (toStderr) {
    const std::string line = stderrPrefix + m + '\n';
    fwrite(line.data(), 1, line.size(), stderr);
  }
  if (path.empty()) return;
  FILE* f = fopen(path.c_str(), "a");
  if (!f) return;
  std::string line;
  if (stamp) {
    char ts[32], head[64];
    const time_t now = time(nullptr);
    tm t{};
    localtime_r(&now, &t);
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &t);
    snprintf(head, sizeof head, "[%s] [%d] ", ts, int(getpid()));
    line = head;
  }
  line += filePrefix + m + '\n';
  fwrite(line.data(), 1, line.size(), f);
  fclose(f);
}

std::string tempPath(const std::string& name, const std::string& fallbackDir) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) {
    if (fallbackDir.empty()) return "";
    dir = fallbackDir;
  }
  return (dir / name).string();
}

}  // namespace tools
