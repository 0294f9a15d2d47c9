// libFuzzer target: a TEXTFILE source (storage::openSource(SourceFormat::TEXT))
// reading a file of the fuzzer's making through one of a few layouts.
//
// Input: byte 0 = (fields - 1) in bits 0-1, ONESHOT in bit 2; then two bytes
// per field: the type (BYTE INTEGER UINT FLOAT DOUBLE RATIONAL STRING, modulo
// 7) and the array count 1..8 (STRING: the width 1..256); the rest is the
// file. next() runs 64 times. Expected: NULL flags 0 or 1, FLOAT and DOUBLE
// values finite (out of range clamps), and once a one-shot source is
// exhausted only all-NULL zero records.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "ir/layout.hpp"
#include "storage/source.hpp"

namespace {

constexpr const char* kName = "fuzz_source";
constexpr int kNext = 64;

void checkRecord(const ir::Layout& l, const std::vector<uint8_t>& rec, const std::vector<uint8_t>& nulls) {
  for (size_t e = 0; e < l.elems.size(); ++e) {
    fuzz::check(nulls[e] <= 1, kName, "a NULL flag other than 0/1");
    if (nulls[e]) continue;
    const ir::Element& el = l.elems[e];
    if (el.type == ir::Type::FLOAT) {
      float v;
      memcpy(&v, rec.data() + el.offset, 4);
      fuzz::check(std::isfinite(v), kName, "a FLOAT that is not finite");
    } else if (el.type == ir::Type::DOUBLE) {
      double v;
      memcpy(&v, rec.data() + el.offset, 8);
      fuzz::check(std::isfinite(v), kName, "a DOUBLE that is not finite");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int fields = (data[0] & 3) + 1;
  const bool oneShot = (data[0] & 4) != 0;
  const size_t head = 1 + 2 * size_t(fields);
  if (size < head) return 0;
  static const ir::Type types[7] = {ir::Type::BYTE,   ir::Type::INTEGER,  ir::Type::UINT,  ir::Type::FLOAT,
                                    ir::Type::DOUBLE, ir::Type::RATIONAL, ir::Type::STRING};
  std::vector<ir::Field> schema;
  for (int f = 0; f < fields; ++f) {
    ir::Field fd;
    fd.name = "f" + std::to_string(f);
    fd.type = types[data[1 + 2 * f] % 7];
    const int n = data[2 + 2 * f];
    if (fd.type == ir::Type::STRING) {
      fd.rlen = n + 1;
      fd.rarray = 1;
    } else {
      fd.rlen = ir::typeSize(fd.type);
      fd.rarray = n % 8 + 1;
    }
    schema.push_back(fd);
  }
  const ir::Layout layout = ir::Layout::of(schema);

  fuzz::TempDir& dir = fuzz::tempDir();
  const std::string path = dir.file("source.txt");
  fuzz::writeFile(path, std::string_view(reinterpret_cast<const char*>(data + head), size - head));
  try {
    storage::SourceOptions o;
    o.oneShot = oneShot;
    auto src = storage::openSource(storage::SourceFormat::TEXT, path, layout, o);
    std::vector<uint8_t> rec(size_t(layout.recordSize)), nulls(layout.elems.size());
    bool wasExhausted = false;
    for (int i = 0; i < kNext; ++i) {
      src->next(rec.data(), nulls.data());
      checkRecord(layout, rec, nulls);
      if (wasExhausted) {
        for (uint8_t b : nulls) fuzz::check(b == 1, kName, "a value after the end of a one-shot source");
        for (uint8_t b : rec) fuzz::check(b == 0, kName, "record bytes after the end of a one-shot source");
      }
      wasExhausted = src->exhausted();
      if (wasExhausted)
        fuzz::check(oneShot || size == head ||
                        std::string_view(reinterpret_cast<const char*>(data + head), size - head)
                                .find_first_not_of(" \t\r\n\f\v") == std::string_view::npos,
                    kName, "a wrapping source with tokens ran out");
    }
  } catch (const storage::SourceError& e) {
    fuzz::die(kName, std::string("a regular file refused: ") + e.what());
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
