// One diagnostics sink for the tools: a line of text to stderr and/or appended
// to a file in the temp directory, with the program's prefix and, in the file,
// an optional timestamp and process id. Callable, so it serves as ipc's
// ServerOptions::log as it is.
#pragma once

#include <string>

namespace tools {

struct LogSink {
  bool toStderr = true;
  std::string stderrPrefix = "";  // before the text on stderr, e.g. "xretractor: "
  std::string path = "";          // the file appended to; empty = none
  std::string filePrefix = "";    // before the text in the file, e.g. "xtrdb: "
  bool stamp = false;             // "[YYYY-mm-dd HH:MM:SS] [pid] " (local time) first in the file

  void operator()(const std::string& m) const;
};

// `name` in the temp directory (TMPDIR, else /tmp); when that is not a directory,
// `name` in `fallbackDir`, or "" without one.
std::string tempPath(const std::string& name, const std::string& fallbackDir = "");

}  // namespace tools
