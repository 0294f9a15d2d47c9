// Ad hoc statements from clients: parsed and compiled against the live plan
// here, above the engine, which only admits the compiled candidate. The
// replies are the wire protocol's (the reference's texts).
#pragma once

#include <string>

#include "engine/engine.hpp"

namespace tools {

// Imports one ad hoc SELECT into the running plan; it starts at the next grid
// point. Returns "OK" or the reply that says why it was rejected.
std::string importAdHoc(engine::Engine& eng, const std::string& text);

}  // namespace tools
