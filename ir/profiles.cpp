#include "ir/profiles.hpp"

#include <cctype>

namespace ir {

namespace {

constexpr StorageProfile kProfiles[] = {
#define PROFILE(name, store, shadow, meaning) {#name, StoreKind::store, shadow != 0, meaning},
#include "ir/profiles.def"
#undef PROFILE
};

}  // namespace

const StorageProfile* findProfile(std::string_view upperName) {
  for (auto& p : kProfiles)
    if (upperName == p.name) return &p;
  return nullptr;
}

bool isProfileKeyword(std::string_view word) {
  for (auto& p : kProfiles) {
    const std::string_view name = p.name;
    if (word == name) return true;
    if (word.size() != name.size()) continue;
    bool lower = true;
    for (size_t i = 0; i < word.size() && lower; ++i) lower = word[i] == char(tolower((unsigned char)name[i]));
    if (lower) return true;
  }
  return false;
}

std::string profileNames() {
  std::string out;
  const size_t n = sizeof kProfiles / sizeof kProfiles[0];
  for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kProfiles[i].name);
  return out;
}

}  // namespace ir
