// libFuzzer target: `.desc` descriptor text -> storage::Descriptor::parse.
// DescError is the documented outcome of bad text. A descriptor that parses
// must keep its sizes in range (the record size is what the stores allocate),
// and its canonical form must parse back to the same canonical form (the
// engine and xtrdb save that form and read it again on the next run).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_support.hpp"
#include "storage/descriptor.hpp"

namespace {

constexpr const char* kName = "fuzz_desc";

void checkSizes(const storage::Descriptor& d) {
  int64_t total = 0;
  for (auto& e : d.entries) {
    if (!e.isData()) continue;
    fuzz::check(e.count > 0, kName, "a data field of count " + std::to_string(e.count));
    const int64_t bytes = e.type == ir::Type::STRING ? int64_t(e.count) : int64_t(ir::typeSize(e.type)) * e.count;
    fuzz::check(bytes == e.byteSize(), kName, "byteSize() of " + e.name + " is not its true size");
    total += bytes;
  }
  fuzz::check(total == d.recordSize(), kName, "recordSize() is not the sum of the field sizes");
}

// Text the descriptor code wrote itself must parse.
storage::Descriptor reparse(const std::string& text) {
  try {
    return storage::Descriptor::parse(text);
  } catch (const storage::DescError& e) {
    fuzz::die(kName, "a written form does not parse: " + std::string(e.what()) + "\n" + text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    storage::Descriptor d = storage::Descriptor::parse(text);
    checkSizes(d);
    d.profile();
    d.ref();
    d.retention();
    d.retMemory();
    fuzz::check(d.compatibleWith(d), kName, "a descriptor is not compatible with itself");
    const std::string canon = d.text();
    if (!d.entries.empty() && canon != "{}") {
      storage::Descriptor again = reparse(canon);
      fuzz::check(again.text() == canon, kName, "canonical form changed on a second parse:\n" + canon);
      fuzz::check(again.recordSize() == d.recordSize(), kName, "record size changed on a second parse");
      storage::Descriptor line = reparse(d.textLine());
      fuzz::check(line.text() == canon, kName, "one-line form parses to another descriptor:\n" + d.textLine());
    }
  } catch (const storage::DescError& e) {
    fuzz::note(kName, "DescError", e.what());
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
