#include "dump.hpp"

#include <set>

namespace ir {

namespace {

void programLines(std::string& out, const Program& prog, const char* indent) {
  for (auto& t : prog) {
    out += indent;
    out += opPrintsArgInField(t.op) ? t.print() : opName(t.op);
    out += '\n';
  }
}

std::string ruleAction(const Rule& r) {
  if (r.action == RuleAction::SYSTEM) return "DO SYSTEM '" + r.command + "'";
  std::string s = "DO DUMP " + std::to_string(r.dumpFrom) + " TO " + std::to_string(r.dumpTo);
  if (r.dumpRetention) s += " RETENTION " + std::to_string(r.dumpRetention);
  return s;
}

}  // namespace

std::string dumpPlan(const Plan& p) {
  std::string out;
  for (auto& q : p.queries) {
    out += q.id;
    if (!q.isDirective()) out += "(" + q.interval.str() + ")";
    if (q.tail > 0) out += "\ttail=" + std::to_string(q.tail);
    if (q.origin > 0) out += "\torigin=" + std::to_string(q.origin);
    if (!q.filename.empty()) out += "\t" + q.filename;
    out += '\n';
    for (auto& t : q.program) {
      out += "\t:- ";
      out += opPrintsArgInFrom(t.op) ? t.print() : opName(t.op);
      out += '\n';
    }
    for (auto& f : q.schema) {
      out += "\t" + f.name + ": " + typeName(f.type) + "\n";
      programLines(out, f.program, "\t\t");
    }
    for (auto& r : q.rules) {
      out += "\tRULE " + r.name + "\n";
      programLines(out, r.condition, "\t\t");
      out += "\t\t" + ruleAction(r) + "\n";
    }
  }
  return out;
}

static std::string braceSafe(std::string s) {
  for (auto& c : s)
    if (c == '{' || c == '}') c = '/';
  return s;
}

static std::string tokenLabel(const Token& t) {
  return (t.op == Op::PUSH_ID || t.op == Op::PUSH_VAL) ? t.print() : opName(t.op);
}

// A stream's node: name, interval, kind and (with o.fields) its fields.
static std::string dotNode(const Query& q, const DotOptions& o) {
  const bool decl = q.isDeclaration();
  std::string style;
  if (decl) {
    if (q.sourceKind == SourceKind::TEXTSOURCE) style = "style=filled,fillcolor=\"#FFF2CC\",color=Black,";
    else style = "style=filled,fillcolor=Skyblue,color=Black,";
  } else if (q.isGenerated()) {
    style = "style=filled,fillcolor=Sienna,color=Black,";
  } else {
    style = "style=\"filled\",fillcolor=Gray,color=Black,";
  }
  std::string out = " " + q.id + "\t[shape=record," + style + "label=\"" + q.id + "\\ninterval=" + q.interval.str();
  if (decl) out += "\\nDeclaration";
  if (q.isGenerated()) out += ", Auto";
  if (o.fields) {
    out += "|{";
    for (size_t i = 0; i < q.schema.size(); ++i) {
      if (i) out += "|";
      if (o.tags) out += "<tag" + std::to_string(i) + ">";
      out += braceSafe(q.schema[i].name) + "(" + typeName(q.schema[i].type) + ")";
    }
    out += "}";
  }
  return out + "\"]\n";
}

// A computed stream's FROM program as a box.
static std::string dotProgram(const Query& q) {
  std::string color = q.isReductionRequired() ? "fillcolor=Green,color=Black,"
                      : q.isGenerated()       ? "fillcolor=Yellow,color=Black,"
                                              : "fillcolor=Orange,color=Black,";
  std::string out = " prg_" + q.id + "\t[shape=box,style=filled," + color + "label=\"";
  for (auto& t : q.program) {
    out += opName(t.op);
    out += " ";
    if (t.op != Op::STREAM_HASH && t.op != Op::STREAM_ADD && t.op != Op::STREAM_DEHASH_DIV &&
        t.op != Op::STREAM_DEHASH_MOD)
      out += textForm(t.v);
    out += "\\n";
  }
  return out + "\"]\n";
}

// One RULE: its action and (unless hidden) its condition's tokens.
static std::string dotRule(const Rule& r, const DotOptions& o) {
  std::string action;
  if (r.action == RuleAction::DUMP) {
    action = "DO DUMP " + std::to_string(r.dumpFrom) + " TO " + std::to_string(r.dumpTo);
    if (r.dumpRetention) action += "\\n RETENTION " + std::to_string(r.dumpRetention);
  } else {
    std::string cmd = r.command;
    for (auto& c : cmd)
      if (c == '"' || c == '\'') c = '=';
    action = "DO SYSTEM \\n'" + cmd + "'";
  }
  std::string out = " rule_" + r.name + "\t[shape=record,style=filled,fillcolor=cyan,color=Black,label=\"{" + r.name +
                    "|" + action + "}";
  if (!o.hideRuleProg) {
    out += "|{";
    for (size_t i = 0; i < r.condition.size(); ++i) {
      if (i) out += "|";
      out += tokenLabel(r.condition[i]);
    }
    out += "}";
  }
  return out + "\"]\n";
}

// Each field's program as a node beside the stream (o.tags), with its edge.
static std::string dotTags(const Query& q, std::set<std::string>& edges) {
  std::string out;
  for (size_t i = 0; i < q.schema.size(); ++i) {
    out += " " + q.id + "_tag" + std::to_string(i) + "\t[shape=record,label=\"" + q.schema[i].name + "|{";
    for (size_t k = 0; k < q.schema[i].program.size(); ++k) {
      if (k) out += "|";
      out += tokenLabel(q.schema[i].program[k]);
    }
    out += "}\"]\n";
    edges.insert(q.id + ":tag" + std::to_string(i) + " -> " + q.id + "_tag" + std::to_string(i) + " [style=dotted]");
  }
  return out;
}

std::string dumpDot(const Plan& p, const DotOptions& o) {
  std::string out = "digraph structs {\n node\t[shape=record];\n";
  if (o.transparent) out += " bgcolor=\"transparent\";\n";
  std::set<std::string> setA, setB;
  for (auto& q : p.queries) {
    if (q.isDirective()) continue;
    out += dotNode(q, o);
    if (q.isDeclaration()) continue;
    if (o.streamProgs) {
      out += dotProgram(q);
      setA.insert(q.id + " -> prg_" + q.id);
    }
    if (o.rules)
      for (auto& r : q.rules) {
        out += dotRule(r, o);
        setA.insert(q.id + " -> rule_" + r.name + " [color=\"red\" dir=none]");
      }
  }
  for (auto& l : setA) out += l + "\n";
  for (auto& q : p.queries) {
    if (q.isDirective() || q.isDeclaration()) continue;
    if (o.tags) out += dotTags(q, setB);
    for (auto& t : q.program)
      if (t.op == Op::PUSH_STREAM)
        setB.insert((o.streamProgs ? "prg_" : "") + q.id + " -> " + std::get<std::string>(t.v));
  }
  for (auto& l : setB) out += l + "\n";
  out += "}\n";
  return out;
}

std::string dumpTables(const Plan& p) {
  std::string out = "\nid\tlen prg\tlen sch\tinterval\tfilename\n";
  for (auto& q : p.queries)
    out += q.id + "\t" + std::to_string(q.program.size()) + "\t" + std::to_string(q.schema.size()) + "\t" +
           q.interval.str() + "\t" + q.filename + "\t\n";
  out += "\nqcnt\tid_ref\ttoken\tvalue\n";
  for (auto& q : p.queries) {
    int n = 0;
    for (auto& t : q.program)
      out += std::to_string(++n) + "\t" + q.id + "\t" + opName(t.op) + "\t" + textForm(t.v) + "\n";
  }
  out += "\nfcnt\tid_ref\tfName\n";
  for (auto& q : p.queries) {
    int n = 0;
    for (auto& f : q.schema) out += std::to_string(++n) + "\t" + q.id + "\t" + f.name + "\t\n";
  }
  out += "\nfcnt_ref\tid_ref\ttoken\tvalue\n";
  for (auto& q : p.queries)
    for (auto& f : q.schema)
      for (auto& t : f.program)
        out += q.id + "\t" + f.name + "\t" + (t.op == Op::PUSH_ID ? t.print() : std::string(opName(t.op))) + "\n";
  out += "\nqcnt\tid\tid_ref\taction\n";
  for (auto& q : p.queries) {
    int n = 0;
    for (auto& r : q.rules) {
      std::string a = r.action == RuleAction::SYSTEM
                          ? "SYSTEM '" + r.command + "'"
                          : "DUMP " + std::to_string(r.dumpFrom) + " TO " + std::to_string(r.dumpTo) +
                                (r.dumpRetention ? " RETENTION " + std::to_string(r.dumpRetention) : "");
      out += std::to_string(++n) + "\t" + q.id + "\t" + r.name + "\t" + a + "\n";
    }
  }
  return out;
}

}  // namespace ir
