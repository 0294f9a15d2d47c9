// Plan orderings. The printed plan order is the final topological order,
// which depends on the interval sorts before it, so both are exact.
#include <algorithm>
#include <map>

#include "passes.hpp"

namespace ir::passes {

void intervalSort(Plan& p) {
  // std::sort on purpose: equal intervals keep the permutation the reference
  // produced with the same algorithm (libstdc++ introsort).
  std::sort(p.queries.begin(), p.queries.end(),
            [](const Query& a, const Query& b) { return a.interval < b.interval; });
}

void topoSort(Plan& p) {
  std::map<std::string, std::vector<std::string>> adj;
  std::map<std::string, bool> visited;
  for (auto& q : p.queries) {
    visited[q.id] = false;
    adj[q.id] = q.dependencies();
  }
  std::vector<std::string> out;
  // Iterative depth-first post-order (plans can be deep).
  for (auto& q : p.queries) {
    if (visited[q.id]) continue;
    std::vector<std::pair<std::string, size_t>> stack{{q.id, 0}};
    visited[q.id] = true;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      auto& deps = adj[v];
      if (i < deps.size()) {
        const std::string u = deps[i++];
        if (!visited[u]) {
          visited[u] = true;
          stack.push_back({u, 0});
        }
      } else {
        out.push_back(v);
        stack.pop_back();
      }
    }
  }
  std::vector<Query> sorted;
  sorted.reserve(out.size());
  for (auto& name : out) sorted.push_back(p.get(name));  // first entry with that id survives
  p.queries = std::move(sorted);
}

}  // namespace ir::passes
