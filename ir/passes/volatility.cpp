// Where results and substrates live: DEFAULT VOLATILE keeps every SELECT
// result without PERSISTENT, VOLATILE or a STORAGE clause in memory, as the
// VOLATILE clause does, and makes MEMORY the substrates' profile unless a
// SUBSTRAT directive names one.
#include "passes.hpp"

namespace ir::passes {

std::string substrateProfile(const Plan& p) {
  if (auto* s = p.find(":SUBSTRAT")) {
    std::string profile = s->filename;
    for (auto& c : profile) c = char(toupper((unsigned char)c));
    return profile;
  }
  return p.find(":DEFAULT_VOLATILE") ? "MEMORY" : "DEFAULT";
}

void applyDefaultVolatility(Plan& p) {
  if (!p.find(":DEFAULT_VOLATILE")) return;
  for (auto& q : p.queries) {
    if (q.isDirective() || q.isDeclaration() || q.isVolatile || q.isPersistent || q.storageExplicit) continue;
    q.makeVolatile();
  }
}

}  // namespace ir::passes
