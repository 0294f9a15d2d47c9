// libFuzzer target: query text -> rql::parseText -> ir::compile (default
// options) -> dumpPlan / dumpDot. The documented error channels (SyntaxError,
// CompileError, RefError) are expected outcomes of bad input; a FatalError
// (broken internal invariant) or any other exception is a bug and aborts so
// that libFuzzer records the input as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "grammar/front.hpp"
#include "ir/compile.hpp"
#include "ir/dump.hpp"

namespace {

[[noreturn]] void die(const char* kind, const char* what) {
  std::fprintf(stderr, "\n==fuzz_compile== unexpected %s: %s\n", kind, what);
  std::fflush(stderr);
  std::abort();
}

// RQL_FUZZ_VERBOSE=1 prints the expected errors too (handy when replaying).
void note(const char* kind, const std::exception& e) {
  static const bool verbose = std::getenv("RQL_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "==fuzz_compile== %s: %s\n", kind, e.what());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<ir::Query> statements = rql::parseText(text);
    ir::Plan plan = ir::compile(std::move(statements), ir::defaultOptions());
    std::string listing = ir::dumpPlan(plan);
    std::string dot = ir::dumpDot(plan, ir::DotOptions{});
    ir::DotOptions all;
    all.fields = all.tags = all.streamProgs = all.rules = all.transparent = true;
    dot += ir::dumpDot(plan, all);
    // Keep the renderings observable so they are not optimised away.
    if (listing.empty() && dot.empty()) std::abort();
  } catch (const rql::SyntaxError& e) {
    note("rql::SyntaxError", e);
  } catch (const ir::CompileError& e) {
    note("ir::CompileError", e);
  } catch (const ir::RefError& e) {
    note("ir::RefError", e);
  } catch (const ir::FatalError& e) {
    die("ir::FatalError", e.what());
  } catch (const std::exception& e) {
    die("exception", e.what());
  } catch (...) {
    die("exception", "(not derived from std::exception)");
  }
  return 0;
}
