// The storage profiles (profiles.def): one table read by the lexer (profile
// words), the compiler (SUBSTRAT, STORAGE checks) and storage (which store).
#pragma once

#include <string>
#include <string_view>

namespace ir {

enum class StoreKind { SEGMENTABLE, FILE, MEMORY };

struct StorageProfile {
  const char* name;  // upper case, as descriptors and plans hold it
  StoreKind store;
  bool shadow;
  const char* meaning;
};

// The profile named `upperName` exactly; nullptr when there is none.
const StorageProfile* findProfile(std::string_view upperName);
// Whether `word` is a profile name written in upper or in lower case (as keywords are).
bool isProfileKeyword(std::string_view word);
// "DEFAULT, MEMORY, ... or GENERIC", for error messages.
std::string profileNames();

}  // namespace ir
