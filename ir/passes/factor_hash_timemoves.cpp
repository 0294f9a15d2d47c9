// (A>i) # (B>k)  ->  (A#B) > (i+k)   when i·ΔA = k·ΔB.
// Both sides then shift by the same physical time, so the rewrite keeps the
// emitted sequence, the interval and the origin, and can only lower the tail.
#include <algorithm>
#include <climits>
#include <set>
#include <unordered_map>

#include "passes.hpp"

namespace ir::passes {

namespace {

const std::string* idxPairName(const Token& t) {
  if (auto* pr = std::get_if<IdxPair>(&t.v)) return &pr->first;
  if (auto* s = std::get_if<std::string>(&t.v)) return s;
  return nullptr;
}

bool startsWithRef(const std::string& text, const std::string& stream) {
  return text.size() > stream.size() && text.compare(0, stream.size(), stream) == 0 && text[stream.size()] == '[';
}

void retargetProgram(Program& prog, const std::string& from, const std::string& to) {
  for (auto& t : prog) {
    if (t.op == Op::PUSH_ID) {
      auto& pr = std::get<IdxPair>(t.v);
      if (pr.first == from) pr.first = to;
    } else if (t.op == Op::PUSH_ID2) {
      if (auto* pr = std::get_if<IdxPair>(&t.v)) {
        if (startsWithRef(pr->first, from)) pr->first = to + pr->first.substr(from.size());
      } else if (auto* s = std::get_if<std::string>(&t.v)) {
        if (startsWithRef(*s, from)) *s = to + s->substr(from.size());
      }
    }
  }
}

// The names a query consumes in the reference's count: FROM operands and
// field references (PUSH_ID, PUSH_ID2 "s[...]"), once per token.
template <class F>
void forEachConsumed(const Query& q, F f) {
  for (auto& t : q.program)
    if (t.op == Op::PUSH_STREAM) f(std::get<std::string>(t.v));
  for (auto& fl : q.schema)
    for (auto& t : fl.program) {
      if (t.op == Op::PUSH_ID) f(std::get<IdxPair>(t.v).first);
      if (t.op == Op::PUSH_ID2)
        if (auto* s = idxPairName(t)) {
          auto br = s->find('[');
          if (br != std::string::npos && br > 0) f(s->substr(0, br));
        }
    }
}

// [PUSH_STREAM A, STREAM_TIMEMOVE(i)] of a substrate, or nothing.
bool shiftOf(const Query& q, std::string& src, int& n) {
  if (!q.isSubstrat || q.program.size() != 2 || q.program[0].op != Op::PUSH_STREAM ||
      q.program[1].op != Op::STREAM_TIMEMOVE)
    return false;
  src = std::get<std::string>(q.program[0].v);
  n = std::get<int32_t>(q.program[1].v);
  return n >= 0;
}

}  // namespace

void retarget(Query& q, const std::string& from, const std::string& to) {
  for (auto& f : q.schema) retargetProgram(f.program, from, to);
  for (auto& r : q.rules) retargetProgram(r.condition, from, to);
}

// The reference rescans the plan from the start after every rewrite until a
// scan changes nothing, erasing the shift substrates nobody reads any more.
// The same rewrites in the same order: entries are marked dead instead of
// erased (positions stay), counts of entries and consumers are kept up to
// date, and a scan resumes after the rewritten stream, or earlier at a `#`
// that reads it (now a shift itself, that `#` may match; nothing else before
// it can change).
namespace {

// The live entries of the plan during the scan, with their consumers.
struct HashFactoring {
  Plan& p;
  std::vector<char> dead;
  std::unordered_map<std::string, std::vector<size_t>> at;    // id -> live positions, ascending
  std::unordered_map<std::string, int64_t> consumed;          // name -> consuming tokens (all live entries)
  std::unordered_map<std::string, std::set<size_t>> readers;  // name -> live positions whose FROM reads it

  explicit HashFactoring(Plan& plan) : p(plan), dead(plan.queries.size(), 0) {
    for (size_t i = 0; i < p.queries.size(); ++i) {
      at[p.queries[i].id].push_back(i);
      track(i, 1);
    }
  }
  // Counts entry i's references (d = 1) or forgets them (d = -1).
  void track(size_t i, int64_t d) {
    forEachConsumed(p.queries[i], [&](const std::string& n) { consumed[n] += d; });
    for (auto& t : p.queries[i].program)
      if (t.op == Op::PUSH_STREAM) {
        auto& r = readers[std::get<std::string>(t.v)];
        if (d > 0) r.insert(i);
        else r.erase(i);
      }
  }
  size_t count(const std::string& id) const {
    auto it = at.find(id);
    return it == at.end() ? size_t(0) : it->second.size();
  }
  Query* find(const std::string& id) {
    auto it = at.find(id);
    return it == at.end() || it->second.empty() ? nullptr : &p.queries[it->second.front()];
  }

  // Entry qi is `L # R` with L = A > i and R = B > k of the same time shift:
  // the hash substrate H = A # B, the shift i + k.
  bool match(size_t qi, std::string& L, std::string& R, std::string& A, std::string& B, int& shift) {
    const Query& q = p.queries[qi];
    if (q.program.size() != 3 || q.program[2].op != Op::STREAM_HASH || q.program[0].op != Op::PUSH_STREAM ||
        q.program[1].op != Op::PUSH_STREAM)
      return false;
    L = std::get<std::string>(q.program[0].v);
    R = std::get<std::string>(q.program[1].v);
    if (L == R || count(L) != 1 || count(R) != 1) return false;
    int i = 0, k = 0;
    if (!shiftOf(*find(L), A, i) || !shiftOf(*find(R), B, k)) return false;
    const Query* qa = find(A);
    const Query* qb = find(B);
    if (!qa) p.get(A);  // the reference's lookup error
    if (!qb) p.get(B);
    Rational dA = qa->interval, dB = qb->interval;
    if (dA.num <= 0 || dB.num <= 0 || !(dA * Rational(i) == dB * Rational(k))) return false;
    if (int64_t(i) + k > INT32_MAX) return false;
    shift = i + k;
    return true;
  }

  // The substrate H (made from L's entry unless an equal one exists); false
  // when a stream of that name exists but is not that substrate.
  bool haveHash(const std::string& H, const Program& hashProg, const std::string& L, const Rational& interval) {
    if (const Query* h = find(H))
      return count(H) == 1 && h->isSubstrat && h->program == hashProg && h->interval == interval &&
             sameFieldShapes(*h, *find(L));
    Query nq = *find(L);
    nq.id = H;
    nq.interval = interval;
    nq.isSubstrat = true;
    nq.program = hashProg;
    nq.rules.clear();
    retarget(nq, L, H);
    p.queries.push_back(std::move(nq));  // moves the entries
    dead.push_back(0);
    const size_t hi = p.queries.size() - 1;
    at[H].push_back(hi);
    track(hi, 1);
    return true;
  }

  // L and R, substrates nobody reads any more, go.
  void dropUnread(const std::string& name) {
    if (consumed[name] != 0) return;
    auto it = at.find(name);
    if (it == at.end() || it->second.empty()) return;
    const size_t g = it->second.front();
    if (!p.queries[g].isSubstrat) return;
    dead[g] = 1;
    it->second.erase(it->second.begin());
    track(g, -1);
  }

  // Rewrites entry qi as H > shift; returns where the scan resumes: after it,
  // or at the first `#` reading it, now that it may be a shift.
  size_t rewrite(size_t qi) {
    std::string L, R, A, B;
    int shift = 0;
    if (!match(qi, L, R, A, B, shift)) return qi + 1;
    Program hashProg{Token(Op::PUSH_STREAM, A), Token(Op::PUSH_STREAM, B), Token(Op::STREAM_HASH)};
    const std::string H = substrateName(hashProg);
    if (!haveHash(H, hashProg, L, p.queries[qi].interval)) return qi + 1;
    Query& target = p.queries[qi];
    track(qi, -1);
    target.program = shift == 0 ? Program{Token(Op::PUSH_STREAM, H)}
                                : Program{Token(Op::PUSH_STREAM, H), Token(Op::STREAM_TIMEMOVE, int32_t(shift))};
    retarget(target, L, H);
    retarget(target, R, H);
    track(qi, 1);
    dropUnread(L);
    dropUnread(R);
    optimized = true;
    size_t resume = qi + 1;
    if (target.isSubstrat)
      for (size_t r : readers[target.id])
        if (!dead[r] && r < resume) resume = r;
    return resume;
  }
  bool optimized = false;
};

}  // namespace

bool factorMatchedHashTimeMoves(Plan& p) {
  HashFactoring f(p);
  for (size_t qi = 0; qi < p.queries.size();) {
    if (f.dead[qi] || p.frozenIds.count(p.queries[qi].id)) {  // a running stream is never rewritten
      ++qi;
      continue;
    }
    qi = f.rewrite(qi);
  }
  if (!f.optimized) return false;
  dropDead(p, f.dead);
  topoSort(p);
  return true;
}

}  // namespace ir::passes
