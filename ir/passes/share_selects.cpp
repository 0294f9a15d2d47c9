// SELECT computation sharing: user SELECTs whose FROM tree contains `+` and
// whose fields compute the same thing share one STREAM_SELECT_* substrate;
// the public streams stay, as projections of it.
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "passes.hpp"

namespace ir::passes {

namespace {

struct Fingerprinter {
  const Plan& p;
  std::set<std::string> visiting;
  std::unordered_map<const Query*, bool> adds;  // memo of hasAdd() for substrates

  static bool isAdd(const Program& pr) {
    return pr.size() == 3 && pr[0].op == Op::PUSH_STREAM && pr[1].op == Op::PUSH_STREAM && pr[2].op == Op::STREAM_ADD;
  }

  // Whether program(q) will contain "ADD{": q or a substrate below it is a `+`.
  bool hasAdd(const Query& q) {
    if (isAdd(q.program)) return true;
    auto it = adds.find(&q);
    if (it != adds.end()) return it->second;
    adds[&q] = false;  // a cycle prints CYCLE{...}, no ADD
    bool any = false;
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM) {
        const Query* s = p.find(std::get<std::string>(t.v));
        if (s && s->isSubstrat && hasAdd(*s)) any = true;
      }
    adds[&q] = any;
    return any;
  }

  void source(const std::string& id, std::string& out) {
    const Query* q = p.find(id);
    if (q && q->isSubstrat) return program(*q, out);
    out += "SOURCE{";
    out += id;
    out += "}";
  }

  // Appends the fingerprint of q's FROM tree to out (one buffer, so a deep
  // tree costs its length, not its length times its depth).
  void program(const Query& q, std::string& out) {
    if (visiting.count(q.id)) {
      out += "CYCLE{" + q.id + "}";
      return;
    }
    visiting.insert(q.id);
    const Program& pr = q.program;
    if (isAdd(pr)) {
      std::string l, r;
      source(std::get<std::string>(pr[0].v), l);
      source(std::get<std::string>(pr[1].v), r);
      if (p.options.commutativeAdd && r < l) std::swap(l, r);
      out += "ADD{";
      out += l;
      out += "}{";
      out += r;
      out += "}";
    } else {
      out += "PROGRAM{";
      for (auto& t : pr) {
        if (t.op == Op::PUSH_STREAM) {
          out += "STREAM{";
          source(std::get<std::string>(t.v), out);
          out += "}";
        } else {
          out += "TOKEN{" + t.print() + "}";
        }
      }
      out += "}";
    }
    visiting.erase(q.id);
  }

  std::optional<std::string> query(const Query& q) {
    if (q.isDeclaration() || q.isDirective() || q.isSubstrat || q.schema.empty()) return std::nullopt;
    if (p.restrictedSharing && !p.newIds.count(q.id)) return std::nullopt;
    if (!hasAdd(q)) return std::nullopt;
    std::string from;
    program(q, from);
    if (from.find("ADD{") == std::string::npos) return std::nullopt;
    std::string fp = "INTERVAL{" + q.interval.str() + "}FROM{" + from + "}FIELDS{";
    for (auto& f : q.schema) {
      fp += "SHAPE{" + std::to_string(int(f.type)) + ":" + std::to_string(f.rlen) + ":" + std::to_string(f.rarray) +
            "}PROGRAM{";
      for (auto& t : f.program) {
        switch (t.op) {
          case Op::PUSH_ID: {
            auto& pr = std::get<IdxPair>(t.v);
            if (pr.first == q.id) return std::nullopt;
            fp += "FIELD{" + pr.first + ":" + std::to_string(pr.second) + "}";
            break;
          }
          case Op::PUSH_ID1:
          case Op::PUSH_ID2:
          case Op::PUSH_ID3:
          case Op::PUSH_ID4:
          case Op::PUSH_ID5:
          case Op::PUSH_IDX:
          case Op::PUSH_TSCAN: return std::nullopt;
          default: fp += "TOKEN{" + t.print() + "}";
        }
      }
      fp += "}";
    }
    return fp + "}";
  }
};

}  // namespace

// Removes every substrate no FROM program reads, until none is left: the
// reference removes them one at a time, which ends with the same plan.
static void removeUnreadSubstrates(Plan& p) {
  const size_t n = p.queries.size();
  std::unordered_map<std::string, int64_t> readers;  // id -> PUSH_STREAM tokens naming it
  for (auto& q : p.queries)
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM) ++readers[std::get<std::string>(t.v)];
  std::unordered_map<std::string, std::vector<size_t>> byId;
  for (size_t i = 0; i < n; ++i) byId[p.queries[i].id].push_back(i);
  std::vector<char> gone(n, 0);
  std::vector<size_t> todo;
  for (size_t i = 0; i < n; ++i)
    if (p.queries[i].isSubstrat && readers[p.queries[i].id] == 0) todo.push_back(i);
  while (!todo.empty()) {
    size_t i = todo.back();
    todo.pop_back();
    if (gone[i]) continue;
    gone[i] = 1;
    for (auto& t : p.queries[i].program)
      if (t.op == Op::PUSH_STREAM && --readers[std::get<std::string>(t.v)] == 0)
        for (size_t j : byId[std::get<std::string>(t.v)])
          if (p.queries[j].isSubstrat && !gone[j]) todo.push_back(j);
  }
  dropDead(p, gone);
}

// The substrate that computes a group's fields once, from its first member.
static Query sharedStream(const Query& rep, const std::string& name, const std::string& profile) {
  Query shared = rep;
  shared.id = name;
  shared.filename.clear();
  shared.isDisposable = shared.isOneShot = shared.isHold = false;
  shared.isVolatile = false;
  shared.isSubstrat = true;
  shared.rules.clear();
  shared.retentionSegments = shared.retentionCapacity = 0;
  shared.policyProfile = profile;
  shared.policyCapacity = 1;
  shared.storageProfile = "DEFAULT";
  shared.userRefs.clear();
  return shared;
}

bool shareEquivalentSelectComputations(Plan& p) {
  std::map<std::string, std::vector<std::string>> groups;
  {
    Fingerprinter fpr{p, {}, {}};
    for (auto& q : p.queries)
      if (auto fp = fpr.query(q)) groups[*fp].push_back(q.id);
  }
  const std::string profile = substrateProfile(p);
  bool changed = false;
  // Positions of the first entry of every id; the loop below only appends.
  std::unordered_map<std::string, size_t> first;
  first.reserve(p.queries.size());
  for (size_t i = 0; i < p.queries.size(); ++i) first.emplace(p.queries[i].id, i);
  auto get = [&](const std::string& id) -> Query& {
    auto it = first.find(id);
    return it == first.end() ? p.get(id) : p.queries[it->second];
  };
  for (auto& [fp, ids] : groups) {
    if (ids.size() < 2) continue;
    std::sort(ids.begin(), ids.end());
    const std::string& rep = ids.front();
    std::string name = "STREAM_SELECT_" + rep;
    for (int n = 2; first.count(name); ++n) name = "STREAM_SELECT_" + rep + "_" + std::to_string(n);
    Query shared = sharedStream(get(rep), name, profile);
    for (auto& id : ids) {
      Query& m = get(id);
      for (size_t j = 0; j < m.schema.size(); ++j) m.schema[j].program = {Token(Op::PUSH_ID, IdxPair(name, int(j)))};
      m.program = {Token(Op::PUSH_STREAM, name)};
    }
    p.queries.push_back(std::move(shared));
    first.emplace(name, p.queries.size() - 1);
    changed = true;
  }
  if (!changed) return false;
  removeUnreadSubstrates(p);
  topoSort(p);
  return true;
}

}  // namespace ir::passes
