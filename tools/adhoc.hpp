// Ad hoc statements from clients: parsed and compiled against the live plan
// here, above the engine, which only admits the compiled candidate. The
// replies are the wire protocol's (the reference's texts).
#pragma once

#include <string>

#include "engine/engine.hpp"

namespace tools {

// What a client may ask for beyond SELECT, DECLARE and RULE ... DO DUMP.
struct AdHocPolicy {
  bool allowSystem = false;  // xretractor --allow-adhoc-system: RULE ... DO SYSTEM from a client
};

// Imports one ad hoc SELECT, DECLARE or RULE into the running plan; a stream
// starts at the next grid point of its interval, a rule with the stream's
// next record. Returns "OK" or the reply that says why it was rejected.
std::string importAdHoc(engine::Engine& eng, const std::string& text, const AdHocPolicy& policy = {});

}  // namespace tools
