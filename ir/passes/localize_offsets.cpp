// Offset localisation: PUSH_ID(source, i) in a field program becomes
// PUSH_ID(self, position in the stream's own input record). Also the gate
// that rejects references to a constituent of an interleave.
#include <algorithm>

#include "flat.hpp"
#include "passes.hpp"

namespace ir::passes {

namespace {

// A stream can reach q by several paths (`(s > 1) + s`): the shallowest path
// names it (a direct operand always wins), the first one at equal depth.
// Names reached at one depth at two different places are ambiguous. A path
// through a window or a reducer (a history aggregate's `R(X @ (1, W))` over
// s) comes after every plain one: its record holds folded values, not s's
// elements, so it never names s when a plain path does (nor ties with one).
struct Reach {
  SourceOffsets& out;
  std::map<std::string, std::pair<bool, int>> rank;  // (through a window or reducer, depth)
  void note(const std::string& u, int g, std::pair<bool, int> k, bool via) {
    auto it = rank.find(u);
    if (it != rank.end()) {
      if (k == it->second && out.offset[u] != g) out.ambiguous.insert(u);
      if (k >= it->second) return;
      out.ambiguous.erase(u);
    }
    rank[u] = k;
    out.offset[u] = g;
    if (via) out.viaInterleave.insert(u);
    else out.viaInterleave.erase(u);
  }
};

bool reshapes(const Query& q) {
  const Op op = q.program.empty() ? Op::PUSH_STREAM : q.program.back().op;
  return op == Op::STREAM_AGSE || op == Op::STREAM_AVG || op == Op::STREAM_MIN || op == Op::STREAM_MAX ||
         op == Op::STREAM_SUM;
}

void collect(FlatIndex& flat, const std::string& s, int base, bool viaHash, bool reshaped, int d, Reach& r) {
  const Plan& p = flat.plan();
  const Query* q = p.find(s);
  if (!q || !q->isSubstrat) return;
  bool hash = false;
  for (auto& t : q->program)
    if (t.op == Op::STREAM_HASH) hash = true;
  reshaped = reshaped || reshapes(*q);
  int o = 0;
  for (auto& t : q->program) {
    if (t.op != Op::PUSH_STREAM) continue;
    const std::string& u = std::get<std::string>(t.v);
    int g = hash ? base : base + o;
    r.note(u, g, {reshaped, d}, viaHash || hash);
    collect(flat, u, g, viaHash || hash, reshaped, d + 1, r);
    if (!hash) {
      if (const Query* uq = p.find(u)) o += flat.width(*uq);
    }
  }
}

SourceOffsets offsetsOf(FlatIndex& flat, const Query& q, const std::set<std::string>* wanted) {
  const Plan& p = flat.plan();
  SourceOffsets out;
  Reach r{out, {}};
  std::vector<std::pair<std::string, int>> direct;
  bool hash = false;
  int o = 0;
  for (auto& t : q.program) {
    if (t.op == Op::PUSH_STREAM) {
      const std::string& s = std::get<std::string>(t.v);
      direct.emplace_back(s, o);
      if (const Query* sq = p.find(s)) o += flat.width(*sq);
    }
    if (t.op == Op::STREAM_HASH) hash = true;
  }
  // Both operands of `s + s` are one record: the later position names it.
  for (auto& [s, base] : direct) {
    r.rank[s] = {false, 0};
    out.offset[s] = hash ? 0 : base;
    if (hash) out.viaInterleave.insert(s);
  }
  // Entries of direct operands are final (a deeper path never wins): only a
  // wanted name behind a substrate needs the walk.
  if (wanted) {
    bool all = true;
    for (auto& n : *wanted)
      if (n != q.id && !out.offset.count(n)) all = false;
    if (all) return out;
  }
  for (auto& [s, base] : direct) collect(flat, s, hash ? 0 : base, hash, false, 1, r);
  return out;
}

// Every element reference must name the stream itself or one of its FROM
// operands (directly or behind a substrate), with an index inside its record.
void checkReferences(const Plan& p, FlatIndex& flat, const std::vector<SourceOffsets>& offsets) {
  for (size_t qi = 0; qi < p.queries.size(); ++qi) {
    const Query& q = p.queries[qi];
    if (q.program.empty()) continue;
    const SourceOffsets& so = offsets[qi];
    const int ownWidth = InputView(flat, q).size();
    auto check = [&](const Program& prog, bool isRule) {
      for (auto& t : prog) {
        if (t.op != Op::PUSH_ID) continue;
        auto& [s, i] = std::get<IdxPair>(t.v);
        int width;
        if (s == q.id) {
          width = isRule ? flat.width(q) : ownWidth;
        } else if (so.offset.count(s)) {
          // Over a window or a reducer, the source's positions are those of the window / result.
          Op op = q.program.back().op;
          bool windowed = op == Op::STREAM_AGSE || op == Op::STREAM_AVG || op == Op::STREAM_MIN ||
                          op == Op::STREAM_MAX || op == Op::STREAM_SUM;
          width = windowed ? ownWidth : flat.width(p.get(s));
        } else if (!p.find(s)) {
          throw CompileError(
              "Stream '" + q.id + "' refers to unknown stream '" + s + "' in " + s + "[" + std::to_string(i) + "]",
              q.loc);
        } else {
          throw CompileError("Stream '" + q.id + "' refers to '" + s + "', which is not in its FROM clause", q.loc);
        }
        if (i < 0 || i >= width)
          throw CompileError("Stream '" + q.id + "': index " + std::to_string(i) + " of " + s +
                                 " is out of range (the record has " + std::to_string(width) + " element" +
                                 (width == 1 ? "" : "s") + ")",
                             q.loc);
      }
    };
    for (auto& f : q.schema) check(f.program, false);
    for (auto& r : q.rules) check(r.condition, true);
  }
}

}  // namespace

SourceOffsets sourceOffsets(const Plan& p, const Query& q) {
  FlatIndex flat(p);
  return offsetsOf(flat, q, nullptr);
}

SourceOffsets sourceOffsetsFor(FlatIndex& flat, const Query& q, const std::set<std::string>& wanted) {
  return offsetsOf(flat, q, &wanted);
}

std::vector<Field> inputRecord(const Plan& p, const Query& q) {
  FlatIndex flat(p);
  InputView in(flat, q);
  std::vector<Field> rec;
  rec.reserve(size_t(in.size()));
  for (int i = 0; i < in.size(); ++i) rec.push_back(*in.slot(i));
  return rec;
}

void localizeFieldOffsets(Plan& p) {
  FlatIndex flat(p);  // no pass here changes a schema's shapes
  // The offsets of the names each stream refers to, once per stream.
  std::vector<SourceOffsets> offsets(p.queries.size());
  for (size_t qi = 0; qi < p.queries.size(); ++qi) {
    const Query& q = p.queries[qi];
    if (q.program.empty()) continue;
    std::set<std::string> wanted = q.userRefs;
    for (auto& f : q.schema) referencedStreams(f.program, wanted);
    for (auto& r : q.rules) referencedStreams(r.condition, wanted);
    offsets[qi] = sourceOffsetsFor(flat, q, wanted);
  }
  // Gate: a constituent of an interleave cannot be told apart after #.
  for (size_t qi = 0; qi < p.queries.size(); ++qi) {
    const Query& q = p.queries[qi];
    if (q.program.empty()) continue;
    const SourceOffsets& so = offsets[qi];
    for (auto& n : q.userRefs) {
      if (n != q.id && so.ambiguous.count(n) && !so.viaInterleave.count(n))
        throw CompileError("Stream '" + q.id + "' refers to '" + n +
                               "', which reaches its FROM clause through two operands at different places. Refer "
                               "to the element by its position in '" +
                               q.id + "' (" + q.id + "[i]) instead.",
                           q.loc);
      if (n == q.id || !so.viaInterleave.count(n)) continue;
      // Point at a rule when only a rule condition names the constituent.
      SrcLoc where = q.loc;
      auto names = [&](const Program& prog) {
        for (auto& t : prog)
          if (t.op == Op::PUSH_ID && std::get<IdxPair>(t.v).first == n) return true;
        return false;
      };
      if (!q.fieldRefs.count(n))
        for (auto& r : q.rules)
          if (names(r.condition)) {
            where = r.loc;
            break;
          }
      throw CompileError("Stream '" + q.id + "' refers to '" + n +
                             "', which is a constituent of an interleave (#). After # the constituents share one "
                             "schema, so this reference cannot be told apart from the other constituent's. Refer to '" +
                             q.id + "' by its own name, or recover the constituent with de-interleave (& / %).",
                         where);
    }
  }
  if (p.options.strictReferences) checkReferences(p, flat, offsets);
  for (size_t qi = 0; qi < p.queries.size(); ++qi) {
    Query& q = p.queries[qi];
    if (q.program.empty()) continue;
    const SourceOffsets& so = offsets[qi];
    for (auto& f : q.schema)
      for (auto& t : f.program) {
        if (t.op != Op::PUSH_ID) continue;
        auto& pr = std::get<IdxPair>(t.v);
        if (pr.first == q.id) continue;
        auto it = so.offset.find(pr.first);
        int base = it == so.offset.end() ? 0 : it->second;  // compatible mode: unknown names read position 0
        pr = IdxPair(q.id, base + pr.second);
      }
  }
}

}  // namespace ir::passes
