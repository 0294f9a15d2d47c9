// libFuzzer target: what the IPC server and client read from a socket —
// ipc::FrameReader over a byte stream and ipc::Tree::parse over each payload.
//
// Input: byte 0 sets the size of the pieces the stream is fed in (1..256, as
// a socket delivers it), the rest is the stream. Each frame cut out must
// survive encodeFrame -> FrameReader unchanged; each payload that parses must
// render (Tree::text) to text that parses to the same tree and renders the
// same again. The whole input is also parsed as tree text on its own.
// Bad frames and unparsable payloads are the documented outcomes of bad input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_support.hpp"
#include "ipc/ipc.hpp"

namespace {

constexpr const char* kName = "fuzz_wire";

bool same(const ipc::Tree& a, const ipc::Tree& b) {
  if (a.value != b.value || a.children.size() != b.children.size()) return false;
  for (size_t i = 0; i < a.children.size(); ++i)
    if (a.children[i].first != b.children[i].first || !same(a.children[i].second, b.children[i].second)) return false;
  return true;
}

void tree(const std::string& text) {
  std::string err;
  auto t = ipc::Tree::parse(text, &err);
  if (!t) {
    fuzz::check(!err.empty(), kName, "a refused tree without an error message");
    return;
  }
  // The lookups the server and xqry make.
  t->get("db.message");
  t->get("db.argument");
  t->path("stream");
  t->child("count");
  const std::string out = t->text();
  std::string err2;
  auto back = ipc::Tree::parse(out, &err2);
  if (!back) fuzz::die(kName, "Tree::text() does not parse: " + err2 + "\n" + out);
  fuzz::check(same(*t, *back), kName, "Tree::text() parses to another tree:\n" + out);
  fuzz::check(back->text() == out, kName, "Tree::text() is not stable:\n" + out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tree(std::string(reinterpret_cast<const char*>(data), size));
    if (size == 0) return 0;
    const size_t piece = size_t(data[0]) + 1;
    const char* stream = reinterpret_cast<const char*>(data + 1);
    const size_t n = size - 1;
    ipc::FrameReader reader;
    bool bad = false;
    for (size_t at = 0; at < n && !bad;) {
      const size_t k = std::min(piece, n - at);
      reader.feed(stream + at, k);
      at += k;
      for (;;) {
        ipc::Frame f;
        std::string err;
        auto r = reader.next(f, err);
        if (r == ipc::FrameReader::Result::NeedMore) break;
        if (r == ipc::FrameReader::Result::Bad) {
          fuzz::check(!err.empty(), kName, "a bad frame without an error message");
          bad = true;
          break;
        }
        fuzz::check(f.payload.size() <= ipc::kMaxPayload, kName, "a frame above the payload limit");
        const uint8_t kind = uint8_t(f.kind);
        fuzz::check(kind >= 1 && kind <= 4, kName, "a frame of unknown kind");
        ipc::FrameReader again;
        const std::string bytes = ipc::encodeFrame(f.kind, f.payload);
        again.feed(bytes.data(), bytes.size());
        ipc::Frame g;
        fuzz::check(again.next(g, err) == ipc::FrameReader::Result::Frame && g.kind == f.kind &&
                        g.payload == f.payload && again.buffered() == 0,
                    kName, "a frame does not survive encodeFrame");
        tree(f.payload);
      }
    }
    fuzz::check(bad || reader.buffered() < ipc::kHeaderSize + ipc::kMaxPayload, kName,
                "the reader holds more than one frame");
  } catch (const std::exception& e) {
    fuzz::die(kName, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    fuzz::die(kName, "unexpected exception (not derived from std::exception)");
  }
  return 0;
}
