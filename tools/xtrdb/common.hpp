// xtrdb: what its parts share (exit statuses, the FATAL error, the log, small text helpers).
#pragma once

#include <stdexcept>
#include <string>

#include "storage/descriptor.hpp"

namespace xtrdb {

constexpr int kExitOk = 0;
constexpr int kExitFatal = 1;          // a FATAL: error, a descriptor syntax error
constexpr int kExitEngineRunning = 1;  // the default xretractor instance holds its lock

// A `FATAL:` error: printed by main, exit status kExitFatal.
struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `name` in the temp directory (/tmp when there is none).
std::string tmpPath(const std::string& name);
// Diagnostics that the reference only logs go to <tmp>/xtrdb.log.
void logLine(const std::string& msg);

inline bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// The name an entry shows in `meta` and `getpos`: data field name, REF path,
// TYPE profile; empty for the other configuration entries.
std::string entryName(const storage::DescEntry& e);

// The storage map of `-s base` on stdout; returns the exit status.
int showStorageMap(const std::string& base);

}  // namespace xtrdb
