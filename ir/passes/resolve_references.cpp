// Field references written by the user (`s[k]`, `s.f`, `f`) become
// PUSH_ID(stream, flat element index).
#include <regex>

#include "passes.hpp"

namespace ir::passes {

namespace {

// Flat index of the first element of schema entry `entry`.
int flatIndexOf(const Query& s, size_t entry) {
  int n = 0;
  for (size_t i = 0; i < entry; ++i) n += s.schema[i].flatCount();
  return n;
}

void resolveProgram(Plan& p, Query& q, Program& prog, SrcLoc loc, bool isField) {
  static const std::regex idxRe(R"(([A-Za-z0-9_$]*)\[(\d*)\])");
  for (auto& t : prog) {
    switch (t.op) {
      case Op::PUSH_ID2: {
        std::string text = std::holds_alternative<IdxPair>(t.v) ? std::get<IdxPair>(t.v).first
                                                                : std::get<std::string>(t.v);
        std::smatch m;
        if (!std::regex_search(text, m, idxRe)) throw RefError("No mach on type conversion: " + text, loc);
        int k = 0;
        try {
          k = std::stoi(m[2].str());
        } catch (...) {
          throw CompileError("index out of range in " + text, loc);
        }
        t = Token(Op::PUSH_ID, IdxPair(m[1].str(), k));
        break;
      }
      case Op::PUSH_ID1: {
        const std::string text = std::get<std::string>(t.v);
        auto dot = text.find('.');
        std::string s = text.substr(0, dot), f = text.substr(dot + 1);
        const Query* src = p.find(s);
        if (!src) throw CompileError("stream '" + q.id + "' refers to unknown stream '" + s + "' in " + text, loc);
        bool found = false;
        for (size_t i = 0; i < src->schema.size(); ++i)
          if (src->schema[i].name == f) {
            t = Token(Op::PUSH_ID, IdxPair(s, flatIndexOf(*src, i)));
            found = true;
            break;
          }
        if (!found) throw RefError("stream '" + s + "' has no field '" + f + "' (in " + q.id + ")", loc);
        break;
      }
      case Op::PUSH_ID3: {
        const std::string f = std::get<std::string>(t.v);
        Args a = getArgs(q.program);
        std::vector<std::string> candidates{a.a1};
        if (a.size == 3 && (a.op.op == Op::STREAM_ADD || a.op.op == Op::STREAM_HASH)) candidates.push_back(a.a2);
        bool found = false;
        for (auto& s : candidates) {
          const Query& src = p.get(s);
          int hit = -1;
          for (size_t i = 0; i < src.schema.size(); ++i)
            if (src.schema[i].name == f) hit = int(i);  // the last field of that name wins
          if (hit >= 0) {
            t = Token(Op::PUSH_ID, IdxPair(s, flatIndexOf(src, size_t(hit))));
            q.userRefs.insert(s);
            if (isField) q.fieldRefs.insert(s);
            found = true;
            break;
          }
        }
        if (!found) throw RefError("No field of given name in stream schema: '" + f + "' (in " + q.id + ")", loc);
        break;
      }
      default: break;
    }
  }
}

}  // namespace

void resolveFieldReferences(Plan& p) {
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    for (auto& f : q.schema) resolveProgram(p, q, f.program, q.loc, true);
    for (auto& r : q.rules) resolveProgram(p, q, r.condition, r.loc, false);
  }
}

}  // namespace ir::passes
