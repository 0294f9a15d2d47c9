// Substrate deduplication: a substrate equal to another stream (same
// interval, FROM program and schema shape) is removed and its consumers
// read the survivor. Repeats to a fixed point, so absorption cascades.
#include <algorithm>

#include "passes.hpp"

namespace ir::passes {

bool sameFieldShapes(const Query& a, const Query& b) {
  if (a.schema.size() != b.schema.size()) return false;
  for (size_t i = 0; i < a.schema.size(); ++i)
    if (a.schema[i].type != b.schema[i].type || a.schema[i].rlen != b.schema[i].rlen ||
        a.schema[i].rarray != b.schema[i].rarray)
      return false;
  return true;
}

namespace {

// Input position j of q as (stream, element), following its FROM operands.
std::vector<std::pair<std::string, int>> inputPositions(const Plan& p, const Query& q) {
  std::vector<std::pair<std::string, int>> out;
  std::vector<std::string> srcs;
  if (q.program.size() == 3 && q.program[2].op == Op::STREAM_ADD)
    srcs = q.dependencies();
  else
    srcs = {q.dependencies().front()};
  for (auto& s : srcs) {
    const Query* src = p.find(s);
    if (!src) return {};
    for (int e = 0; e < flatWidth(*src); ++e) out.push_back({s, e});
  }
  return out;
}

// A user stream may absorb a substrate only when it passes its input through
// unchanged: otherwise the substrate's consumers would read transformed values.
bool passesThrough(const Plan& p, const Query& q) {
  if (q.program.empty()) return false;
  auto pos = inputPositions(p, q);
  if (pos.size() != q.schema.size()) return false;
  for (size_t j = 0; j < q.schema.size(); ++j) {
    const Program& prog = q.schema[j].program;
    if (prog.size() != 1) return false;
    const Token& t = prog[0];
    std::string stream;
    int idx = -1;
    if (t.op == Op::PUSH_ID) {
      auto& pr = std::get<IdxPair>(t.v);
      stream = pr.first;
      idx = pr.second;
    } else if (t.op == Op::PUSH_ID2) {
      std::string s = std::holds_alternative<IdxPair>(t.v) ? std::get<IdxPair>(t.v).first : std::get<std::string>(t.v);
      auto br = s.find('[');
      if (br == std::string::npos) return false;
      stream = s.substr(0, br);
      try {
        idx = std::stoi(s.substr(br + 1));
      } catch (...) {
        return false;
      }
    } else {
      return false;
    }
    bool ok = (stream == q.id && idx == int(j)) || (stream == pos[j].first && idx == pos[j].second);
    if (!ok) return false;
  }
  return true;
}

void replaceReferences(Plan& p, const std::string& from, const std::string& to) {
  for (auto& q : p.queries) {
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM && std::get<std::string>(t.v) == from) t.v = to;
    retarget(q, from, to);
  }
}

}  // namespace

bool deduplicateSubstrates(Plan& p) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t a = 0; a < p.queries.size() && !changed; ++a) {
      const Query& it = p.queries[a];
      if (!it.isSubstrat || p.frozenIds.count(it.id)) continue;  // a running stream is never removed
      for (size_t b = 0; b < p.queries.size(); ++b) {
        if (a == b) continue;
        const Query& it2 = p.queries[b];
        if (it2.interval != it.interval || it2.program != it.program || !sameFieldShapes(it, it2)) continue;
        if (!it2.isSubstrat && !passesThrough(p, it2)) continue;
        const std::string from = it.id, to = it2.id;
        p.queries.erase(p.queries.begin() + long(a));
        replaceReferences(p, from, to);
        changed = any = true;
        break;
      }
    }
  }
  return any;
}

}  // namespace ir::passes
