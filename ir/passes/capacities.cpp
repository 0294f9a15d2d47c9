// History each stream must keep so that every consumer can read what it
// needs (records). Not printed; the engine sizes its ring buffers from it.
#include <algorithm>
#include <numeric>

#include "flat.hpp"
#include "passes.hpp"

#include "ir/operators/operator.hpp"
#include "ir/profiles.hpp"

namespace ir::passes {

namespace {
using R = Rational;
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
}  // namespace

// max(0, newest - oldest) over n in [origin, origin + F/gcd(F, k)), with
//   newest = floor((n + 1 + Wq)·k / F) - Ws - 1,  oldest = floor((n·k - |w| + 1) / F).
// Over one period n·k mod F takes every multiple of g = gcd(F, k) once, and
// newest - oldest = floor((m + D) / F) - Ws - 1 with m = (n·k + 1 - |w|) mod F
// and D = (1 + Wq)·k + |w| - 1, so the largest m ≡ 1 - |w| (mod g) decides.
int64_t windowDemand(int64_t F, int64_t k, int64_t w, int64_t origin, int64_t Wq, int64_t Ws) {
  (void)origin;  // a whole period is scanned wherever it starts
  if (F <= 0 || k <= 0) return 0;
  const int64_t g = std::gcd(F, k);
  const int64_t c2 = 1 - std::abs(w), D = (1 + Wq) * k - c2;
  const int64_t mmax = F - g + ((c2 % g) + g) % g;
  return std::max<int64_t>(0, floorDiv(mmax + D, F) - Ws - 1);
}

void computeRequiredCapacities(Plan& p) {
  auto& cap = p.maxCapacity;
  cap.clear();
  for (auto& q : p.queries)
    if (q.program.empty()) cap[q.id] = 1;
  auto demand = [&](const std::string& id, int64_t d) {
    int v = int(std::clamp<int64_t>(d, 1, INT32_MAX));
    auto it = cap.find(id);
    if (it == cap.end()) cap[id] = v;
    else it->second = std::max(it->second, v);
  };
  FlatIndex flat(p);
  for (auto& q : p.queries) {
    if (q.program.empty()) continue;
    if (!cap.count(q.id)) cap[q.id] = 1;
    const auto [so, s1, s2] = ops::operandsOf(p, q);
    if (so) {
      auto width1 = [&] { return flat.width(s1); };
      auto need = [&](const Query& s, int64_t records) { demand(s.id, records); };
      so->demand(ops::Site{q, q.program.back(), s1, s2, width1}, need);
    }
    for (auto& r : q.rules)
      if (r.action == RuleAction::DUMP && r.dumpFrom < 0) {
        demand(s1.id, -int64_t(r.dumpFrom));
        demand(q.id, -int64_t(r.dumpFrom) + 2);  // the dump reads the stream's own past
      }
  }
}

// All history rings together must fit the budget (limits.history_memory_mib):
// a delay or a dump window of 10^9 records is refused here, not by the OOM killer.
void checkHistoryBudget(const Plan& p) {
  const int64_t budget = p.options.historyBudgetBytes;
  int64_t total = 0, worst = 0;
  const Query* worstQ = nullptr;
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    auto it = p.maxCapacity.find(q.id);
    const int64_t demand = it == p.maxCapacity.end() ? 1 : it->second;
    int64_t bytesPerRecord = 0, elems = 0;
    for (auto& f : q.schema) {
      bytesPerRecord += int64_t(f.rlen) * f.rarray;
      elems += f.flatCount();
    }
    const int64_t bytes = historyRing(demand) * (bytesPerRecord + elems);
    total += bytes;
    if (bytes > worst) worst = bytes, worstQ = &q;
  }
  if (total <= budget || !worstQ) return;
  auto mib = [](int64_t b) { return std::to_string((b + (1 << 20) - 1) >> 20); };
  const Query& q = *worstQ;
  std::string who = "stream '" + q.id + "'";
  SrcLoc at = q.loc;
  // The history is demanded by its readers: name them, and point at the first.
  std::string readers;
  int n = 0;
  for (auto& u : p.queries)
    for (auto& d : u.dependencies())
      if (d == q.id && n < 3) {
        if (n++ == 0 && (q.isSubstrat || q.isDeclaration())) at = u.loc;
        readers += (readers.empty() ? "" : ", ") + std::string("'") + u.id + "'";
        break;
      }
  if (!readers.empty()) who += " (read by " + readers + ")";
  for (auto& r : q.rules)
    if (r.action == RuleAction::DUMP && int64_t(-r.dumpFrom) + 2 >= p.maxCapacity.at(q.id)) {
      who += " (its rule '" + r.name + "' dumps " + std::to_string(-int64_t(r.dumpFrom)) + " records back)";
      at = r.loc;
      break;
    }
  throw CompileError("history of " + who + " needs " + mib(worst) + " MiB (" +
                         std::to_string(p.maxCapacity.count(q.id) ? p.maxCapacity.at(q.id) : 1) +
                         " records); all streams together need " + mib(total) + " MiB, over the limit of " +
                         mib(budget) + " MiB (limits.history_memory_mib)",
                     at);
}

void applyCapacitiesToStreams(Plan& p) {
  for (auto& [id, c] : p.maxCapacity)
    if (Query* q = p.find(id); q && q->policyCapacity != 0) q->policyCapacity = c;
}

// storage.default_retention: a file stream that segments (DEFAULT, DIRECT)
// and has no RETENTION of its own gets the configured one. The store is the
// one storage::descriptorFor() picks: an explicit STORAGE clause, else the
// policy's profile (substrates: SUBSTRAT's).
void applyDefaultRetention(Plan& p) {
  const auto [capacity, segments] = p.options.defaultRetention;
  if (capacity <= 0 || segments <= 0) return;
  for (auto& q : p.queries) {
    if (q.isDirective() || q.isDeclaration() || q.isVolatile) continue;
    if (q.retentionCapacity != 0 || q.retentionSegments != 0) continue;
    const bool clause = q.storageProfile != "DEFAULT";
    std::string profile = q.policyCapacity != 0 && !clause ? q.policyProfile : q.storageProfile;
    for (auto& c : profile) c = char(toupper((unsigned char)c));
    const StorageProfile* sp = findProfile(profile);
    if (!sp || sp->store != StoreKind::SEGMENTABLE) continue;
    q.retentionCapacity = capacity;
    q.retentionSegments = segments;
  }
}

}  // namespace ir::passes
