// Field references written by the user (`s[k]`, `s.f`, `f`) become
// PUSH_ID(stream, flat element index).
#include <cctype>
#include <optional>
#include <unordered_map>

#include "passes.hpp"

namespace ir::passes {

namespace {

// Field names and flat positions of the streams looked up, built once per
// stream (schemas do not change in this pass).
struct Names {
  std::unordered_map<std::string, int> first, last;  // field name -> flat index of its first / last field
};

struct Resolver {
  Plan& p;
  std::unordered_map<const Query*, Names> names;

  const Names& of(const Query& s) {
    auto it = names.find(&s);
    if (it != names.end()) return it->second;
    Names n;
    int flat = 0;
    for (auto& f : s.schema) {
      n.first.emplace(f.name, flat);
      n.last[f.name] = flat;
      flat += f.flatCount();
    }
    return names.emplace(&s, std::move(n)).first->second;
  }

  // The first match of ([A-Za-z0-9_$]*)\[(\d*)\] in text: the first '[' followed
  // by digits and ']', with the run of name characters just before it.
  static bool matchIndexRef(const std::string& text, std::string& name, std::string& digits) {
    auto isName = [](char c) { return std::isalnum((unsigned char)c) || c == '_' || c == '$'; };
    for (size_t j = text.find('['); j != std::string::npos; j = text.find('[', j + 1)) {
      size_t e = j + 1;
      while (e < text.size() && text[e] >= '0' && text[e] <= '9') ++e;
      if (e >= text.size() || text[e] != ']') continue;
      size_t b = j;
      while (b > 0 && isName(text[b - 1])) --b;
      name = text.substr(b, j - b);
      digits = text.substr(j + 1, e - j - 1);
      return true;
    }
    return false;
  }

  // The FROM streams a bare name is searched in.
  static std::vector<std::string> candidatesOf(const Query& q) {
    Args a = getArgs(q.program);
    std::vector<std::string> c{a.a1};
    if (a.size == 3 && (a.op.op == Op::STREAM_ADD || a.op.op == Op::STREAM_HASH)) c.push_back(a.a2);
    return c;
  }

  // Element k of field `f` of a FROM stream, when no stream is named f.
  std::optional<IdxPair> fieldElement(const Query& q, const std::string& f, int k, SrcLoc loc) {
    for (auto& s : candidatesOf(q)) {
      const Query& src = p.get(s);
      for (auto& fl : src.schema) {
        if (fl.name != f) continue;
        if (k >= fl.flatCount())
          throw CompileError("stream '" + q.id + "': " + f + "[" + std::to_string(k) + "] is outside field " + f +
                                 " of " + s + " (" + std::to_string(fl.flatCount()) + " elements)",
                             loc);
        return IdxPair(s, of(src).first.at(f) + k);
      }
    }
    return std::nullopt;
  }

  void resolveProgram(Query& q, Program& prog, SrcLoc loc, bool isField) {
    for (auto& t : prog) {
      switch (t.op) {
        case Op::PUSH_ID2: {
          std::string text =
              std::holds_alternative<IdxPair>(t.v) ? std::get<IdxPair>(t.v).first : std::get<std::string>(t.v);
          std::string name, digits;
          if (!matchIndexRef(text, name, digits)) throw RefError("No mach on type conversion: " + text, loc);
          int k = 0;
          try {
            k = std::stoi(digits);
          } catch (...) {
            throw CompileError("index out of range in " + text, loc);
          }
          if (!p.find(name) && name != q.id) {
            if (auto e = fieldElement(q, name, k, loc)) {  // `a[1]`: element 1 of array field a
              t = Token(Op::PUSH_ID, *e);
              break;
            }
          }
          t = Token(Op::PUSH_ID, IdxPair(std::move(name), k));
          break;
        }
        case Op::PUSH_ID1: {
          const std::string text = std::get<std::string>(t.v);
          auto dot = text.find('.');
          std::string s = text.substr(0, dot), f = text.substr(dot + 1);
          const Query* src = p.find(s);
          if (!src) throw CompileError("stream '" + q.id + "' refers to unknown stream '" + s + "' in " + text, loc);
          const Names& n = of(*src);
          auto it = n.first.find(f);
          if (it == n.first.end()) throw RefError("stream '" + s + "' has no field '" + f + "' (in " + q.id + ")", loc);
          t = Token(Op::PUSH_ID, IdxPair(s, it->second));
          break;
        }
        case Op::PUSH_ID3: {
          const std::string f = std::get<std::string>(t.v);
          const std::vector<std::string> candidates = candidatesOf(q);
          bool found = false;
          for (auto& s : candidates) {
            const Names& n = of(p.get(s));
            auto it = n.last.find(f);  // the last field of that name wins
            if (it != n.last.end()) {
              t = Token(Op::PUSH_ID, IdxPair(s, it->second));
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
};

}  // namespace

void resolveFieldReferences(Plan& p) {
  Resolver res{p, {}};
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    for (auto& f : q.schema) res.resolveProgram(q, f.program, q.loc, true);
    for (auto& r : q.rules) res.resolveProgram(q, r.condition, r.loc, false);
  }
}

}  // namespace ir::passes
