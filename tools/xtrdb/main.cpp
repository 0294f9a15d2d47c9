// xtrdb: inspect and edit the artifacts of one stream (.desc, data, .meta,
// shadow files) from a token-driven command loop, or draw the storage map
// of a stream with `-s base`. Specification: tools.md §3, storage.md.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "build_config.h"
#include "common.hpp"
#include "session.hpp"
#include "tools/log.hpp"
#include "tools/version.hpp"

namespace xtrdb {

namespace fs = std::filesystem;

std::string tmpPath(const std::string& name) { return tools::tempPath(name, "/tmp"); }

// Diagnostics that the reference only logs go to <tmp>/xtrdb.log.
void logLine(const std::string& msg) {
  static const tools::LogSink sink{.toStderr = false, .path = tmpPath("xtrdb.log"), .filePrefix = "xtrdb: "};
  sink(msg);
}

std::string entryName(const storage::DescEntry& e) {
  switch (e.kind) {
    case storage::DescEntry::Kind::DATA:
    case storage::DescEntry::Kind::REF:
    case storage::DescEntry::Kind::TYPE: return e.name;
    default: return "";
  }
}

namespace {

// Refuses to run while the default xretractor instance holds its lock.
bool engineRunning() {
  const std::string path = tmpPath("xretractor_service.lock");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool running = flock(fd, LOCK_SH | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EAGAIN);
  ::close(fd);
  return running;
}

void printHelp(const std::string& argv0) {
  fmt::print("{} - data accessing tool.\n\nUsage: {} [option]\n\n", argv0, argv0);
  fmt::print(
      "Allowed options:\n"
      "  -h [ --help ]              produce help message\n"
      "  -s [ --storagemap ] arg    show storage structure for specified file\n"
      "  -n [ --noprompt ]          suppress prompt and ok output\n"
      "  noprompt                   same as -n (legacy)\n\n");
  fmt::print("retractor {} (C++20, meson)\nLog: {}\nLicense: MIT. This program comes with ABSOLUTELY NO WARRANTY.\n",
             RDB_VERSION, tmpPath("xtrdb.log"));
}

int runTool(const std::string& mapBase, bool showMap, bool noPrompt) {
  try {
    if (showMap) return showStorageMap(mapBase);
    if (engineRunning()) {
      std::cerr << "xretractor is running — stop it before using xtrdb.\n";
      return kExitEngineRunning;
    }
    Session s(noPrompt);
    return s.run();
  } catch (const storage::DescError& e) {
    std::cout.flush();
    std::cerr << "Syntax error @Descriptor\nmsg:" << e.what() << "\n";
    return kExitFatal;
  } catch (const std::exception& e) {
    std::cout.flush();
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return kExitFatal;
  }
}

}  // namespace

}  // namespace xtrdb

int main(int argc, char** argv) {
  // The bare word `noprompt` is the legacy form of -n.
  bool noPrompt = false;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "noprompt") noPrompt = true;
    else args.push_back(argv[i]);
  }
  CLI::App app{"xtrdb - data accessing tool."};
  app.set_help_flag();
  bool help = false, n = false;
  std::string mapBase;
  app.add_flag("-h,--help", help, "produce help message");
  app.add_option("-s,--storagemap", mapBase, "show storage structure for specified file");
  app.add_flag("-n,--noprompt", n, "suppress prompt and ok output");
  app.set_version_flag("--version", tools::versionText("xtrdb"));
  try {
    app.parse(int(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (help) {
    xtrdb::printHelp(argv[0]);
    return xtrdb::kExitOk;
  }
  return xtrdb::runTool(mapBase, app.count("-s") > 0, noPrompt || n);
}
