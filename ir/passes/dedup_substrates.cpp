// Substrate deduplication: a substrate equal to another stream (same
// interval, FROM program and schema shape) is removed and its consumers
// read the survivor. Repeats to a fixed point, so absorption cascades.
#include <algorithm>
#include <set>
#include <unordered_map>

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
  if (q.program.size() == 3 && q.program[2].op == Op::STREAM_ADD) srcs = q.dependencies();
  else srcs = {q.dependencies().front()};
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

// Name a field or rule token refers to (PUSH_ID stream, or the stream of a
// PUSH_ID2 "s[k]" text), or nullptr.
const std::string* refName(const Token& t, std::string& buf) {
  if (t.op == Op::PUSH_ID) return &std::get<IdxPair>(t.v).first;
  if (t.op != Op::PUSH_ID2) return nullptr;
  const std::string* text = nullptr;
  if (auto* pr = std::get_if<IdxPair>(&t.v)) text = &pr->first;
  else if (auto* str = std::get_if<std::string>(&t.v)) text = str;
  if (!text) return nullptr;
  auto br = text->find('[');
  if (br == std::string::npos) return nullptr;
  buf = text->substr(0, br);
  return &buf;
}

bool sameFieldPrograms(const Query& a, const Query& b) {
  if (a.schema.size() != b.schema.size()) return false;
  for (size_t i = 0; i < a.schema.size(); ++i)
    if (a.schema[i].program != b.schema[i].program) return false;
  return true;
}

size_t hashKey(const Query& q) {
  size_t h = std::hash<int64_t>()(q.interval.num) * 31 + std::hash<int64_t>()(q.interval.den);
  for (auto& t : q.program) {
    h = h * 1000003 + size_t(t.op);
    h = h * 1000003 + std::hash<std::string>()(textForm(t.v)) + t.v.index();
  }
  return h;
}

}  // namespace

// The reference scans the plan for the first substrate (in plan order) that
// equals another stream, merges it into the first such stream, and starts
// over until a scan finds nothing. The same merges, in the same order: the
// streams are bucketed by (interval, FROM program), and after a merge only
// the substrates whose answer can have changed are asked again (the streams
// whose program or fields now name the survivor, and the substrates sharing
// a bucket with those). Merged substrates are dropped at the end.
namespace {

struct Dedup {
  Plan& p;
  const size_t n;
  std::vector<char> dead;
  std::unordered_map<size_t, std::set<size_t>> buckets;  // key hash -> positions
  std::vector<size_t> keyOf;
  std::unordered_map<std::string, std::set<size_t>> refsTo;  // name -> positions naming it
  std::set<size_t> dirty;                                    // substrates to ask (again)

  explicit Dedup(Plan& plan) : p(plan), n(plan.queries.size()), dead(n, 0), keyOf(n) {
    for (size_t i = 0; i < n; ++i) {
      keyOf[i] = hashKey(p.queries[i]);
      buckets[keyOf[i]].insert(i);
      noteRefs(i);
    }
    for (size_t i = 0; i < n; ++i)
      if (p.queries[i].isSubstrat) dirty.insert(i);
  }
  void noteRefs(size_t i) {
    const Query& q = p.queries[i];
    std::string buf;
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM) refsTo[std::get<std::string>(t.v)].insert(i);
    auto prog = [&](const Program& pr) {
      for (auto& t : pr)
        if (const std::string* s = refName(t, buf)) refsTo[*s].insert(i);
    };
    for (auto& f : q.schema) prog(f.program);
    for (auto& r : q.rules) prog(r.condition);
  }
  void markBucket(size_t key) {
    for (size_t j : buckets[key])
      if (p.queries[j].isSubstrat) dirty.insert(j);
  }
  // The first stream substrate a may merge into; n when none.
  size_t partnerOf(size_t a) {
    const Query& it = p.queries[a];
    for (size_t b : buckets[keyOf[a]]) {
      if (b == a || dead[b]) continue;
      const Query& it2 = p.queries[b];
      if (it2.interval != it.interval || it2.program != it.program || !sameFieldShapes(it, it2)) continue;
      if (!it2.isSubstrat && !passesThrough(p, it2)) continue;
      // A substrate that computes its fields (the expression of MIN(x : W))
      // equals only one computing the same.
      if (!sameFieldPrograms(it, it2) && (!passesThrough(p, it) || !passesThrough(p, it2))) continue;
      return b;
    }
    return n;
  }
  // Substrate a goes; every stream naming it names `match` instead.
  void merge(size_t a, size_t match) {
    const std::string from = p.queries[a].id, to = p.queries[match].id;
    dead[a] = 1;
    buckets[keyOf[a]].erase(a);
    std::set<size_t> users = std::move(refsTo[from]);
    refsTo.erase(from);
    for (size_t c : users) {
      if (dead[c]) continue;
      Query& q = p.queries[c];
      bool programChanged = false;
      for (auto& t : q.program)
        if (t.op == Op::PUSH_STREAM && std::get<std::string>(t.v) == from) {
          t.v = to;
          programChanged = true;
        }
      retarget(q, from, to);
      refsTo[to].insert(c);
      if (programChanged) {
        buckets[keyOf[c]].erase(c);
        keyOf[c] = hashKey(q);
        buckets[keyOf[c]].insert(c);
      }
      if (q.isSubstrat) dirty.insert(c);
      markBucket(keyOf[c]);  // c may now be (or pass through as) the partner of a substrate there
    }
  }
};

}  // namespace

bool deduplicateSubstrates(Plan& p) {
  Dedup d(p);
  bool any = false;
  while (!d.dirty.empty()) {
    const size_t a = *d.dirty.begin();
    d.dirty.erase(d.dirty.begin());
    if (d.dead[a]) continue;
    const Query& it = p.queries[a];
    if (!it.isSubstrat || p.frozenIds.count(it.id)) continue;  // a running stream is never removed
    const size_t match = d.partnerOf(a);
    if (match == d.n) continue;
    d.merge(a, match);
    any = true;
  }
  if (any) dropDead(p, d.dead);
  return any;
}

}  // namespace ir::passes
