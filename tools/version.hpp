// What `--version` prints: the program, the project's version and the options
// this build was made with (tools/meson.build writes them into version.h).
#pragma once

#include <string>

#include "build_config.h"
#include "tools/version.h"

namespace tools {

inline std::string versionText(const std::string& prog) {
  return prog + " (retractor) " + RDB_VERSION + "\nbuild: " + RDB_BUILD_OPTIONS + "\n";
}

}  // namespace tools
