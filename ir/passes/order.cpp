// Plan orderings. The printed plan order is the final topological order,
// which depends on the interval sorts before it, so both are exact.
#include <algorithm>
#include <unordered_map>

#include "order.hpp"
#include "passes.hpp"

namespace ir::passes {

IntervalKey IntervalKey::of(const Rational& r, uint32_t pos) {
  constexpr int64_t kExact = int64_t(1) << 53;
  const bool fast = r.num < kExact && r.num > -kExact && r.den < kExact;
  return IntervalKey{fast ? double(r.num) / double(r.den) : 0.0, r, pos, fast};
}

void sortKeys(std::vector<IntervalKey>& keys) {
  // std::sort on purpose: equal intervals keep the permutation the reference
  // produced with the same algorithm (libstdc++ introsort). The permutation
  // depends only on the comparisons, so sorting small keys instead of whole
  // queries gives the same order.
  std::sort(keys.begin(), keys.end(),
            [](const IntervalKey& a, const IntervalKey& b) { return IntervalKey::less(a, b); });
}

void applyOrder(Plan& p, const std::vector<IntervalKey>& keys) {
  std::vector<Query> sorted;
  sorted.reserve(keys.size());
  for (auto& k : keys) sorted.push_back(std::move(p.queries[k.pos]));
  p.queries = std::move(sorted);
}

void intervalSort(Plan& p) {
  std::vector<IntervalKey> keys;
  keys.reserve(p.queries.size());
  for (size_t i = 0; i < p.queries.size(); ++i) keys.push_back(IntervalKey::of(p.queries[i].interval, uint32_t(i)));
  sortKeys(keys);
  applyOrder(p, keys);
}

void topoSort(Plan& p) {
  // Position of the first entry of every id; later entries of an id are dropped.
  const size_t n = p.queries.size();
  std::unordered_map<std::string, uint32_t> first;
  first.reserve(n);
  std::vector<uint32_t> roots;
  roots.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (first.emplace(p.queries[i].id, uint32_t(i)).second) roots.push_back(uint32_t(i));
  // Operands as positions (of the first entry of each name), read from the
  // last entry of an id (the reference keeps one adjacency list per name); a
  // name no entry has is visited as a leaf of its own.
  std::unordered_map<std::string, uint32_t> last;
  last.reserve(n);
  for (size_t i = 0; i < n; ++i) last[p.queries[i].id] = uint32_t(i);
  std::vector<std::vector<uint32_t>> adj(n);
  std::vector<std::string> missing;  // names without an entry
  std::unordered_map<std::string, uint32_t> missingIdx;
  for (uint32_t i : roots)
    for (auto& t : p.queries[last.at(p.queries[i].id)].program)
      if (t.op == Op::PUSH_STREAM) {
        const std::string& d = std::get<std::string>(t.v);
        auto it = first.find(d);
        if (it != first.end()) {
          adj[i].push_back(it->second);
        } else {
          auto [m, fresh] = missingIdx.emplace(d, uint32_t(n + missing.size()));
          if (fresh) missing.push_back(d);
          adj[i].push_back(m->second);
        }
      }
  const size_t total = n + missing.size();
  std::vector<char> visited(total, 0);
  std::vector<uint32_t> out;
  out.reserve(total);
  // Iterative depth-first post-order (plans can be deep).
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t r : roots) {
    if (visited[r]) continue;
    visited[r] = 1;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (v < n && i < adj[v].size()) {
        const uint32_t u = adj[v][i++];
        if (!visited[u]) {
          visited[u] = 1;
          stack.push_back({u, 0});
        }
      } else {
        out.push_back(v);
        stack.pop_back();
      }
    }
  }
  for (uint32_t v : out)
    if (v >= n) p.get(missing[v - n]);  // an operand no entry has: the reference's lookup error
  std::vector<Query> sorted;
  sorted.reserve(out.size());
  for (uint32_t v : out) sorted.push_back(std::move(p.queries[v]));
  p.queries = std::move(sorted);
}

void dropDead(Plan& p, const std::vector<char>& dead) {
  std::vector<Query> kept;
  kept.reserve(p.queries.size());
  for (size_t i = 0; i < p.queries.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(p.queries[i]));
  p.queries = std::move(kept);
}

}  // namespace ir::passes
