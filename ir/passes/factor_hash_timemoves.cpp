// (A>i) # (B>k)  ->  (A#B) > (i+k)   when i·ΔA = k·ΔB.
// Both sides then shift by the same physical time, so the rewrite keeps the
// emitted sequence, the interval and the origin, and can only lower the tail.
#include <algorithm>
#include <climits>

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

int consumers(const Plan& p, const std::string& name, const Query* except) {
  int n = 0;
  for (auto& q : p.queries) {
    if (&q == except) continue;
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM && std::get<std::string>(t.v) == name) ++n;
    for (auto& f : q.schema)
      for (auto& t : f.program) {
        if (t.op == Op::PUSH_ID && std::get<IdxPair>(t.v).first == name) ++n;
        if (t.op == Op::PUSH_ID2) {
          auto* s = idxPairName(t);
          if (s && startsWithRef(*s, name)) ++n;
        }
      }
  }
  return n;
}

int countId(const Plan& p, const std::string& id) {
  return int(std::count_if(p.queries.begin(), p.queries.end(), [&](const Query& q) { return q.id == id; }));
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

bool factorMatchedHashTimeMoves(Plan& p) {
  bool optimized = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t qi = 0; qi < p.queries.size() && !changed; ++qi) {
      Query& q = p.queries[qi];
      if (p.frozenIds.count(q.id)) continue;  // a running stream is never rewritten
      if (q.program.size() != 3 || q.program[2].op != Op::STREAM_HASH || q.program[0].op != Op::PUSH_STREAM ||
          q.program[1].op != Op::PUSH_STREAM)
        continue;
      const std::string L = std::get<std::string>(q.program[0].v), R = std::get<std::string>(q.program[1].v);
      if (L == R) continue;
      // The cheap tests first; counting entries scans the plan.
      const Query* lq = p.find(L);
      const Query* rq = p.find(R);
      if (!lq || !rq) continue;  // (a count of 0)
      std::string A, B;
      int i = 0, k = 0;
      if (!shiftOf(*lq, A, i) || !shiftOf(*rq, B, k)) continue;
      if (countId(p, L) != 1 || countId(p, R) != 1) continue;
      Rational dA = p.get(A).interval, dB = p.get(B).interval;
      if (dA.num <= 0 || dB.num <= 0 || !(dA * Rational(i) == dB * Rational(k))) continue;
      if (int64_t(i) + k > INT32_MAX) continue;
      Program hashProg{Token(Op::PUSH_STREAM, A), Token(Op::PUSH_STREAM, B), Token(Op::STREAM_HASH)};
      const std::string H = substrateName(hashProg);
      if (const Query* h = p.find(H)) {
        if (countId(p, H) != 1 || !h->isSubstrat || h->program != hashProg || h->interval != q.interval ||
            !sameFieldShapes(*h, p.get(L)))
          continue;
      } else {
        Query nq = p.get(L);
        nq.id = H;
        nq.interval = q.interval;
        nq.isSubstrat = true;
        nq.program = hashProg;
        nq.rules.clear();
        retarget(nq, L, H);
        p.queries.push_back(std::move(nq));
      }
      Query& target = p.queries[qi];  // push_back may have moved it
      int shift = i + k;
      target.program = shift == 0 ? Program{Token(Op::PUSH_STREAM, H)}
                                  : Program{Token(Op::PUSH_STREAM, H), Token(Op::STREAM_TIMEMOVE, int32_t(shift))};
      retarget(target, L, H);
      retarget(target, R, H);
      for (const std::string& gone : {L, R}) {
        if (consumers(p, gone, nullptr) == 0) {
          auto it = std::find_if(p.queries.begin(), p.queries.end(), [&](const Query& x) { return x.id == gone; });
          if (it != p.queries.end() && it->isSubstrat) p.queries.erase(it);
        }
      }
      optimized = changed = true;
    }
  }
  if (optimized) topoSort(p);
  return optimized;
}

}  // namespace ir::passes
