// SELECT computation sharing: user SELECTs whose FROM tree contains `+` and
// whose fields compute the same thing share one STREAM_SELECT_* substrate;
// the public streams stay, as projections of it.
#include <algorithm>
#include <functional>
#include <map>

#include "passes.hpp"

namespace ir::passes {

namespace {

struct Fingerprinter {
  const Plan& p;
  std::set<std::string> visiting;

  std::string source(const std::string& id) {
    const Query* q = p.find(id);
    if (q && q->isSubstrat) return program(*q);
    return "SOURCE{" + id + "}";
  }

  std::string program(const Query& q) {
    if (visiting.count(q.id)) return "CYCLE{" + q.id + "}";
    visiting.insert(q.id);
    std::string out;
    const Program& pr = q.program;
    if (pr.size() == 3 && pr[0].op == Op::PUSH_STREAM && pr[1].op == Op::PUSH_STREAM && pr[2].op == Op::STREAM_ADD) {
      std::string l = source(std::get<std::string>(pr[0].v)), r = source(std::get<std::string>(pr[1].v));
      if (p.options.commutativeAdd && r < l) std::swap(l, r);
      out = "ADD{" + l + "}{" + r + "}";
    } else {
      out = "PROGRAM{";
      for (auto& t : pr)
        out += t.op == Op::PUSH_STREAM ? "STREAM{" + source(std::get<std::string>(t.v)) + "}" : "TOKEN{" + t.print() + "}";
      out += "}";
    }
    visiting.erase(q.id);
    return out;
  }

  std::optional<std::string> query(const Query& q) {
    if (q.isDeclaration() || q.isDirective() || q.isSubstrat || q.schema.empty()) return std::nullopt;
    if (p.restrictedSharing && !p.newIds.count(q.id)) return std::nullopt;
    std::string from = program(q);
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

bool shareEquivalentSelectComputations(Plan& p) {
  std::map<std::string, std::vector<std::string>> groups;
  {
    Fingerprinter fpr{p, {}};
    for (auto& q : p.queries)
      if (auto fp = fpr.query(q)) groups[*fp].push_back(q.id);
  }
  std::string profile = "DEFAULT";
  if (auto* s = p.find(":SUBSTRAT")) {
    profile = s->filename;
    for (auto& c : profile) c = char(toupper((unsigned char)c));
  }
  bool changed = false;
  for (auto& [fp, ids] : groups) {
    if (ids.size() < 2) continue;
    std::sort(ids.begin(), ids.end());
    const std::string& rep = ids.front();
    std::string name = "STREAM_SELECT_" + rep;
    for (int n = 2; p.find(name); ++n) name = "STREAM_SELECT_" + rep + "_" + std::to_string(n);
    Query shared = p.get(rep);
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
    for (auto& id : ids) {
      Query& m = p.get(id);
      for (size_t j = 0; j < m.schema.size(); ++j) m.schema[j].program = {Token(Op::PUSH_ID, IdxPair(name, int(j)))};
      m.program = {Token(Op::PUSH_STREAM, name)};
    }
    p.queries.push_back(std::move(shared));
    changed = true;
  }
  if (!changed) return false;
  for (bool removed = true; removed;) {
    removed = false;
    for (auto it = p.queries.begin(); it != p.queries.end(); ++it) {
      if (!it->isSubstrat) continue;
      bool used = false;
      for (auto& q : p.queries)
        for (auto& t : q.program)
          if (t.op == Op::PUSH_STREAM && std::get<std::string>(t.v) == it->id) used = true;
      if (!used) {
        p.queries.erase(it);
        removed = true;
        break;
      }
    }
  }
  topoSort(p);
  return true;
}

}  // namespace ir::passes
