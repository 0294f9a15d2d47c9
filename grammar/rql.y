// RQL grammar (Bison, C++ skeleton). Actions lower statements straight to
// IR token programs in reverse Polish order. Operator precedence reproduces
// the reference grouping, including its two asymmetries: `+` binds tighter
// than binary `-`, and `*` tighter than `/` (see docs/rql.md).
%require "3.7"
%language "c++"
%define api.namespace {rql::gen}
%define api.parser.class {Parser}
%define api.value.type variant
%define api.token.constructor
%define parse.error detailed
%locations
%define api.location.type {ir::SrcLoc}

%code requires {
// Locations are points (line, column): a rule starts where its first symbol starts.
#define YYLLOC_DEFAULT(Cur, Rhs, N) \
  do { (Cur) = (N) ? YYRHSLOC(Rhs, 1) : YYRHSLOC(Rhs, 0); } while (0)
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
#include "ir/ir.hpp"
#include "lexer/lexer.hpp"

namespace rql::gen {
// A field expression under construction.
struct Expr {
  ir::Program p;
  bool intOverflow = false;  // bare literal 2147483648, valid only after unary minus
  bool bareNumber = false;   // unparenthesised numeric literal
  ir::Op top = ir::Op::VOID_COMMAND;  // its outermost binary operator, unless parenthesised
};
// A generator index expression (`3-$`) in reverse Polish: 'n' literal, '$', or + - *.
struct GenOp {
  char k;
  int32_t v = 0;
};
using GenExpr = std::vector<GenOp>;
// A FROM expression under construction.
struct SExpr {
  ir::Program p;
  bool plainName = false;
  bool hasReducer = false;
  ir::Op top = ir::Op::VOID_COMMAND;  // outermost # or +, unless parenthesised
};
struct Ctx {
  const std::vector<Lexeme>* lex = nullptr;
  size_t next = 0;
  std::vector<ir::Query>* out = nullptr;
  // Position of the first statement of each id parsed on earlier lines; the
  // statements of this line start at lineStart.
  const std::unordered_map<std::string, size_t>* firstIndex = nullptr;
  size_t lineStart = 0;
  int depth = 0;  // parentheses open
  // Clause values collected while a SELECT is being reduced.
  std::string pendingFile;
  std::pair<int, int> pendingRetention{0, 0};
  bool pendingVolatile = false;
  bool pendingPersistent = false;
  ir::Rule pendingRule;
  std::vector<ir::Warning>* warnings = nullptr;
  std::vector<GenExpr> gen;  // index expressions using `$` in this statement
  size_t lastSelectCount = 1;  // streams the last SELECT made (a generator: N)
  // MIN/MAX/AVG/SUMC(x : W) of this statement, in the order written.
  struct HistoryAggregate {
    ir::Op op;
    ir::Program expr;
    int width;
    ir::SrcLoc loc;
  };
  std::vector<HistoryAggregate> aggs;
};
}
}

%code {
#include "grammar/line_parser.hpp"
#include "ir/profiles.hpp"
#include <cerrno>
#include <climits>
#include <cstdlib>
#include "grammar/front.hpp"
#include "ir/functions.hpp"
#include "ir/limits.hpp"
#include "ir/endpoint.hpp"
#include <algorithm>
#include <cstdio>
#include "ir/passes/passes.hpp"

namespace rql::gen {
static Parser::symbol_type yylex(Ctx& ctx);

// The int a decimal text (maybe with a minus the lexer joined to it) stands
// for, negated when `negative`; false past [lo, INT32_MAX].
static bool int32Of(const std::string& text, bool negative, int64_t lo, int32_t& out) {
  errno = 0;
  long long v = strtoll(text.c_str(), nullptr, 10);
  if (negative) v = -v;
  if (errno == ERANGE || v > INT32_MAX || v < lo) return false;
  out = int32_t(v);
  return true;
}
static ir::Value parseInt(const std::string& text, const ir::SrcLoc& loc, bool negative) {
  int32_t v;
  if (!int32Of(text, negative, INT32_MIN, v))
    throw SyntaxError("integer literal " + std::string(negative ? "-" : "") + text + " is out of range", loc);
  return v;
}
// A count, size, index, reach or interval part: a number the plan's limits
// bound, so one past them (or negative: a minus the lexer joined to the
// number) is a plan error as the limits' own checks are (exit 71), never a
// syntax error. `what` names it and `limit` is its bound in the message.
static int toCount(const std::string& text, const ir::SrcLoc& loc, const char* what = "number",
                   int64_t limit = INT32_MAX) {
  if (!text.empty() && text[0] == '-')
    throw ir::CompileError(std::string(what) + " must not be negative, got " + text, loc);
  errno = 0;
  const unsigned long long v = strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v > uint64_t(limit))
    throw ir::CompileError(std::string(what) + " " + text + " exceeds the limit " + std::to_string(limit), loc);
  return int(v);
}
// A signed count (a DUMP bound, a window width; the lexer may have joined a
// minus to it): past the int range it is a plan error, as toCount's are.
static int toSigned(const std::string& text, const ir::SrcLoc& loc) {
  int32_t v;
  if (!int32Of(text, false, -INT32_MAX, v))
    throw ir::CompileError("number " + text + " exceeds the limit " + std::to_string(INT32_MAX), loc);
  return v;
}
static ir::Rational ratOf(const std::string& n, const std::string& d, const ir::SrcLoc& loc) {
  int64_t den = toCount(d, loc);
  if (den == 0) throw SyntaxError("denominator of " + n + "/" + d + " is zero", loc);
  return ir::Rational(toCount(n, loc), den);
}
// A literal over its bound of ir/limits.hpp: "AGSE step 65537 exceeds the limit 65536".
// The sign of a DUMP bound or a window width is no part of its reach.
static void checkLimit(const char* what, int64_t v, int64_t limit, const ir::SrcLoc& loc) {
  if (v > limit || v < -limit)
    throw ir::CompileError(std::string(what) + " " + std::to_string(v) + " exceeds the limit " + std::to_string(limit),
                           loc);
}
static void checkMqttUrl(const std::string& url, const ir::SrcLoc& loc) {
  ir::MqttEndpoint e;
  if (std::string why = ir::parseMqttEndpoint(url, e); !why.empty()) throw ir::CompileError(why, loc);
}
static int retentionCapacity(const std::string& text, const ir::SrcLoc& loc) {
  const int n = toCount(text, loc);
  if (n <= 0) throw ir::CompileError("RETENTION capacity must be greater than zero, got " + text, loc);
  return n;
}
// Nesting (in yylex) and expression size are limited as programs are built:
// operands are copied into their operator's program at every level, so deep
// nesting over a long expression would cost their product.
static void append(ir::Program& a, const ir::Program& b, const ir::SrcLoc& loc) {
  if (int64_t(a.size()) + int64_t(b.size()) >= ir::kMaxExpressionTokens)
    throw ir::CompileError("expression of more than " + std::to_string(ir::kMaxExpressionTokens) +
                           " tokens; the limit is " + std::to_string(ir::kMaxExpressionTokens), loc);
  a.insert(a.end(), b.begin(), b.end());
}
static Expr binary(Expr a, const Expr& b, ir::Op op, const ir::SrcLoc& loc) {
  if (a.intOverflow || b.intOverflow) throw SyntaxError("integer literal 2147483648 is out of range", loc);
  append(a.p, b.p, loc);
  a.p.push_back(ir::Token(op));
  a.bareNumber = false;
  a.top = op;
  return a;
}
static Expr checked(Expr e, const ir::SrcLoc& loc) {
  if (e.intOverflow) throw SyntaxError("integer literal 2147483648 is out of range", loc);
  return e;
}
static SExpr sbinary(SExpr a, const SExpr& b, ir::Token op, const ir::SrcLoc& loc) {
  append(a.p, b.p, loc);
  a.top = op.op;
  a.p.push_back(std::move(op));
  a.plainName = false;
  return a;
}
static SExpr sunary(SExpr a, std::vector<ir::Token> toks, const ir::SrcLoc& loc) {
  (void)loc;
  for (auto& t : toks) a.p.push_back(std::move(t));
  a.plainName = false;
  a.top = ir::Op::VOID_COMMAND;
  return a;
}
// A call is checked against the function table: known name, right arity.
static Expr call(const std::string& name, std::vector<Expr> args, const ir::SrcLoc& loc) {
  auto fn = ir::findFunction(name);
  if (!fn) throw ir::CompileError("unknown function '" + name + "'", loc);
  if (int(args.size()) != fn->arity)
    throw ir::CompileError("function '" + std::string(fn->name) + "' takes " + std::to_string(fn->arity) +
                           " argument" + (fn->arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()), loc);
  Expr e;
  for (auto& a : args) append(e.p, checked(std::move(a), loc).p, loc);
  e.p.push_back(ir::Token(ir::Op::CALL, std::string(fn->name)));
  return e;
}
static ir::Query* findQuery(Ctx& ctx, const std::string& id) {
  if (ctx.firstIndex) {
    auto it = ctx.firstIndex->find(id);
    if (it != ctx.firstIndex->end()) return &(*ctx.out)[it->second];
  }
  for (size_t i = ctx.firstIndex ? ctx.lineStart : 0; i < ctx.out->size(); ++i)
    if ((*ctx.out)[i].id == id) return &(*ctx.out)[i];
  return nullptr;
}
using ir::kMaxNesting;

static std::string reducerWord(ir::Op op) {
  static const char* words[] = {"AVG", "MIN", "MAX", "SUMC"};
  return words[int(op) - int(ir::Op::STREAM_AVG)];
}
static void warn(Ctx& ctx, const ir::SrcLoc& loc, const std::string& m) {
  if (ctx.warnings) ctx.warnings->push_back({loc, m});
}
static bool usesDollar(const GenExpr& g) {
  for (auto& o : g)
    if (o.k == '$') return true;
  return false;
}
static int64_t evalGen(const GenExpr& g, int64_t dollar, const ir::SrcLoc& loc) {
  std::vector<int64_t> st;
  for (auto& o : g) {
    if (o.k == 'n') st.push_back(o.v);
    else if (o.k == '$') st.push_back(dollar);
    else {
      int64_t r = st.back(); st.pop_back();
      int64_t& l = st.back();
      l = o.k == '+' ? l + r : o.k == '-' ? l - r : l * r;
      if (l > INT32_MAX || l < INT32_MIN) throw ir::CompileError("generator index expression out of range", loc);
    }
  }
  return st.back();
}
static GenExpr genBinary(GenExpr a, const GenExpr& b, char op) {
  a.insert(a.end(), b.begin(), b.end());
  a.push_back({op});
  return a;
}
// An index expression: a constant now, or a placeholder resolved when the
// generator expands (ctx.gen[k]).
static ir::Token genToken(Ctx& ctx, const std::string& name, GenExpr g) {
  ctx.gen.push_back(std::move(g));
  return ir::Token(ir::Op::PUSH_GENIDX, ir::IdxPair(name, int32_t(ctx.gen.size() - 1)));
}
// Member k of stream family `name` (STREAM name[N] made name$0 .. name$N-1).
static std::string familyMember(Ctx& ctx, const std::string& name, int64_t k, const ir::SrcLoc& loc) {
  const std::string id = name + "$" + std::to_string(k);
  if (findQuery(ctx, id)) return id;
  int n = 0;
  while (findQuery(ctx, name + "$" + std::to_string(n))) ++n;
  if (n == 0) throw ir::CompileError("'" + name + "[" + std::to_string(k) + "]' names no stream family: no STREAM " + name + "[N] above", loc);
  throw ir::CompileError("'" + name + "[" + std::to_string(k) + "]' is outside the range 0.." + std::to_string(n - 1) +
                             " of stream family " + name, loc);
}
// One instance of a generator's program: `$` is `dollar`.
static ir::Program instantiate(Ctx& ctx, ir::Program prog, int64_t dollar, bool from, const ir::SrcLoc& loc) {
  for (auto& t : prog) {
    if (t.op != ir::Op::PUSH_GENIDX) continue;
    auto [name, k] = std::get<ir::IdxPair>(t.v);
    const int64_t v = evalGen(ctx.gen[size_t(k)], dollar, loc);
    if (name.empty()) t = ir::Token(ir::Op::PUSH_VAL, int32_t(v));
    else if (from) t = ir::Token(ir::Op::PUSH_STREAM, familyMember(ctx, name, v, loc));
    else if (v < 0)
      throw ir::CompileError("index " + std::to_string(v) + " of " + name + " (for $ = " + std::to_string(dollar) +
                                 ") must not be negative", loc);
    else t = ir::Token(ir::Op::PUSH_ID2, name + "[" + std::to_string(v) + "]");
  }
  return prog;
}
// MIN/MAX/AVG/SUMC(x : W) over FROM s: each distinct (x, W, reducer) becomes
// one operand of q's FROM sum, `s + R(X @ (1, W)) + ...`, where X is a
// substrate computing x over s (shared by every aggregate of x). Record n of
// R(X @ (1, W)) folds x over records n-W+1 .. n of s; the window moves the
// origin by W-1. The placeholders become references to those operands later
// (ir/passes/history_aggregates.cpp), once the width of s is known.
static std::vector<ir::Query> historyWindows(Ctx& ctx, ir::Query& q) {
  const std::string src = std::get<std::string>(q.program[0].v);
  std::vector<ir::Query> windows;
  std::vector<std::string> keys;  // operand of the FROM sum, by (reducer, X, W)
  std::vector<int32_t> operandOf(ctx.aggs.size());
  for (size_t k = 0; k < ctx.aggs.size(); ++k) {
    auto& a = ctx.aggs[k];
    // The statement's own name reads the FROM record: in X it is s.
    for (auto& t : a.expr) {
      auto* v = std::get_if<std::string>(&t.v);
      if (!v) continue;
      if ((t.op == ir::Op::PUSH_ID2 || t.op == ir::Op::PUSH_IDX) && v->rfind(q.id + "[", 0) == 0)
        *v = src + v->substr(q.id.size());
      else if (t.op == ir::Op::PUSH_ID1 && v->rfind(q.id + ".", 0) == 0)
        *v = src + v->substr(q.id.size());
    }
    std::string text = src;
    for (auto& t : a.expr) text += " " + t.print();
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ir::passes::fnv1a64(text));
    const std::string x = "STREAM_HISTORY_" + src + "_x" + hex;
    if (!std::any_of(windows.begin(), windows.end(), [&](const ir::Query& w) { return w.id == x; })) {
      ir::Query w;
      w.id = x;
      w.loc = a.loc;
      w.program = {ir::Token(ir::Op::PUSH_STREAM, src)};
      ir::Field f;
      f.name = x + "_0";
      f.program = a.expr;
      w.schema = {f};
      w.isSubstrat = true;
      w.makeVolatile();  // plumbing: kept in memory
      windows.push_back(std::move(w));
    }
    const std::string key = std::to_string(int(a.op)) + " " + x + " " + std::to_string(a.width);
    auto it = std::find(keys.begin(), keys.end(), key);
    operandOf[k] = int32_t(it - keys.begin());
    if (it != keys.end()) continue;
    keys.push_back(key);
    q.program.push_back(ir::Token(ir::Op::PUSH_STREAM, x));
    q.program.push_back(ir::Token(ir::Op::STREAM_AGSE, std::pair<int32_t, int32_t>(1, a.width)));
    q.program.push_back(ir::Token(a.op));
    q.program.push_back(ir::Token(ir::Op::STREAM_ADD));
  }
  for (auto& f : q.schema)
    for (auto& t : f.program)
      if (t.op == ir::Op::PUSH_WINDOW_AGG) t.v = operandOf[size_t(std::get<int32_t>(t.v))];
  q.historySource = src;
  return windows;
}
}  // namespace rql::gen
}

%param { Ctx& ctx }

%token END 0 "end of line"
%token SELECT "SELECT" STREAM "STREAM" FROM "FROM" DECLARE "DECLARE" RETENTION "RETENTION"
%token FILE_KW "FILE" STORAGE "STORAGE" ROTATION "ROTATION" SUBSTRAT "SUBSTRAT" RULE "RULE"
%token DISPOSABLE "DISPOSABLE" ONESHOT "ONESHOT" HOLD "HOLD" TIMEOUT "TIMEOUT" MQTT "MQTT" PUBLISH "PUBLISH" VOLATILE "VOLATILE" ON "ON" WHEN "WHEN"
%token DUMP "DUMP" SYSTEM "SYSTEM" DO "DO" TO "TO" TEXTFILE "TEXTFILE" BINFILE "BINFILE" DEVICE "DEVICE"
%token AND "AND" OR "OR" NOT "NOT"
%token <std::string> MIN "MIN" MAX "MAX" AVG "AVG" SUMC "SUMC"
%token <ir::Type> TYPE "type name"
%token <std::string> PROFILE "storage profile" FN_WORD "function name" TO_STRING "to_string"
%token <std::string> ID "identifier" DECIMAL "integer" FLOAT "decimal number" STRING "string"
%token <std::string> STRING_PROFILE "profile string"
%token LPAREN "(" RPAREN ")" LBRACK "[" RBRACK "]" COMMA "," DOT "." STAR "*" SLASH "/" PLUS "+" MINUS "-"
%token UNDERSCORE "_" AT "@" HASH "#" AMP "&" PERCENT "%" GT ">" LT "<" EQ "=" NE "!=" GE ">=" LE "<=" COLON ":"
%token CARET "^" DOLLAR "$" PERSISTENT "PERSISTENT"

%type <Expr> expr operand
%type <std::vector<Expr>> args
%type <std::vector<ir::Program>> select_list
%type <ir::Program> cond cmp
%type <SExpr> sexpr sshift sterm spost sfactor
%type <ir::Rational> rational
%type <std::pair<ir::Rational, bool>> opt_timeout
%type <ir::Op> reducer
%type <std::vector<ir::Field>> field_decls
%type <ir::Field> field_decl
%type <ir::SourceKind> source_kw
%type <int> opt_flags
%type <int> signed_int
%type <GenExpr> gexpr
%type <std::pair<std::string, int>> stream_name
%type <std::string> profile_word directive_value opt_publish

%left OR
%left AND
%left LE
%left GE
%left LT
%left GT
%left NE
%left EQ
%left MINUS
%left PLUS
%precedence NOT
%left SLASH
%left STAR
%precedence UMINUS
%right CARET

%start program

%%

program: item | program item ;

item: statement
    | STORAGE profile_word {
        // The STORAGE clause of a SELECT: it closes the statement before it.
        if (ctx.out->empty() || ctx.out->back().program.empty() || ctx.out->back().isDirective())
          throw SyntaxError("STORAGE " + $2 + " must follow a SELECT statement", @1);
        // A generator's clause is every instance's.
        const size_t n = std::min(ctx.lastSelectCount, ctx.out->size());
        for (size_t k = ctx.out->size() - n; k < ctx.out->size(); ++k) {
          auto& q = (*ctx.out)[k];
          if (q.storageExplicit) throw SyntaxError("a SELECT takes one STORAGE clause", @1);
          if ($2 == "DEVICE" || $2 == "TEXTSOURCE")
            throw ir::CompileError("STORAGE " + $2 + " of stream " + q.id +
                " is not a storage profile but a source kind of DECLARE; use " + ir::profileNames(), @2);
          if (q.isPersistent && $2 == "MEMORY")
            throw ir::CompileError("stream " + q.id + " is PERSISTENT and cannot be stored in MEMORY", @2);
          q.storageProfile = $2;
          q.storageExplicit = true;
        }
      }
    ;

profile_word: PROFILE { $$ = $1; } | DEVICE { $$ = "DEVICE"; } ;

statement: select | declare | directive | rule ;

directive_value: STRING { $$ = $1; } | STRING_PROFILE { $$ = $1; } ;

directive: PROFILE VOLATILE {
             // DEFAULT VOLATILE: results and substrates in memory unless PERSISTENT.
             if ($1 != "DEFAULT") throw SyntaxError("unexpected storage profile " + $1 + " before VOLATILE; the directive is DEFAULT VOLATILE", @1);
             for (auto& q : *ctx.out) {
               if (q.id == ":DEFAULT_VOLATILE") throw ir::CompileError("DEFAULT VOLATILE is given twice", @1);
               if (!q.isDirective()) throw ir::CompileError("DEFAULT VOLATILE must come before the first DECLARE, SELECT or RULE", @1);
             }
             ir::Query q; q.id = ":DEFAULT_VOLATILE"; q.loc = @1;
             ctx.out->push_back(std::move(q));
           }
         | STORAGE directive_value {
             if ($2.empty()) throw ir::CompileError("directive filename must not be empty", @2);
             ir::Query q; q.id = ":STORAGE"; q.filename = $2; q.loc = @1;
             if (q.filename.back() != '/') q.filename += '/';
             ctx.out->push_back(std::move(q));
           }
         | SUBSTRAT directive_value {
             if ($2.empty()) throw ir::CompileError("directive filename must not be empty", @2);
             ir::Query q; q.id = ":SUBSTRAT"; q.filename = $2; q.loc = @1;
             ctx.out->push_back(std::move(q));
           }
         | ROTATION directive_value {
             if ($2.empty()) throw ir::CompileError("directive filename must not be empty", @2);
             ir::Query q; q.id = ":ROTATION"; q.filename = $2; q.loc = @1;
             ctx.out->push_back(std::move(q));
           }
         ;

declare: DECLARE field_decls STREAM ID COMMA rational source_kw STRING opt_timeout opt_flags {
           ir::Query q; q.id = $4; q.loc = @1;
           q.interval = $6;
           if (q.interval.num <= 0)
             throw ir::CompileError("interval of stream '" + $4 + "' must be greater than zero", @6);
           if (!q.interval.fitsInt32())
             throw ir::CompileError("interval of stream '" + $4 + "' does not fit 32-bit numerator/denominator", @6);
           q.filename = $8;
           q.schema = std::move($2);
           if ($7 == ir::SourceKind::NONE) {
             std::string low = $8; for (auto& c : low) c = char(tolower((unsigned char)c));
             q.sourceKind = low.find(".txt") != std::string::npos ? ir::SourceKind::TEXTSOURCE
                            : low.rfind("/dev/", 0) == 0            ? ir::SourceKind::DEVICE
                                                                    : ir::SourceKind::BINFILE;
           } else q.sourceKind = $7;
           const bool live = q.sourceKind == ir::SourceKind::DEVICE || q.sourceKind == ir::SourceKind::MQTT;
           const char* kind = q.sourceKind == ir::SourceKind::MQTT ? "an MQTT" : "a DEVICE";
           if (q.sourceKind == ir::SourceKind::MQTT) checkMqttUrl(q.filename, @8);
           if ($9.second) {
             if (!live)
               throw ir::CompileError("TIMEOUT of stream '" + $4 + "' is only allowed on a DEVICE or MQTT source", @9);
             q.readTimeout = $9.first; q.timeoutGiven = true;
           }
           q.isDisposable = $10 & 1; q.isOneShot = $10 & 2; q.isHold = $10 & 4;
           if (live && (q.isHold || q.isDisposable))
             throw ir::CompileError(std::string(q.isHold ? "HOLD" : "DISPOSABLE") + " of stream '" + $4 +
                                    "' is not allowed on " + kind + " source", @10);
           if (q.sourceKind == ir::SourceKind::MQTT && q.isOneShot)
             throw ir::CompileError("ONESHOT of stream '" + $4 + "' is not allowed on an MQTT source", @10);
           ctx.out->push_back(std::move(q));
         }
       ;

source_kw: FILE_KW { $$ = ir::SourceKind::NONE; }
         | TEXTFILE { $$ = ir::SourceKind::TEXTSOURCE; }
         | BINFILE { $$ = ir::SourceKind::BINFILE; }
         | DEVICE { $$ = ir::SourceKind::DEVICE; }
         | MQTT { $$ = ir::SourceKind::MQTT; }
         ;

opt_timeout: %empty { $$ = {ir::Rational(0), false}; }
           | TIMEOUT rational { $$ = {$2, true}; }
           ;

opt_flags: %empty { $$ = 0; }
         | DISPOSABLE { $$ = 1; } | ONESHOT { $$ = 2; } | HOLD { $$ = 4; }
         | DISPOSABLE ONESHOT { $$ = 3; } | DISPOSABLE HOLD { $$ = 5; } | ONESHOT HOLD { $$ = 6; }
         | DISPOSABLE ONESHOT HOLD { $$ = 7; }
         ;

field_decls: field_decl { $$.push_back($1); }
           | field_decls COMMA field_decl { $$ = std::move($1); $$.push_back($3); }
           ;

field_decl: ID TYPE {
              $$.name = $1; $$.type = $2; $$.rlen = ir::typeSize($2); $$.rarray = 1;
            }
          | ID TYPE LBRACK DECIMAL RBRACK {
              int n = toCount($4, @4);
              if (n <= 0) throw ir::CompileError("array size of field '" + $1 + "' must be positive", @4);
              // Counted in elements (STRING[N]: N bytes); the record's bytes are the compiler's check.
              if (n > ir::kMaxFieldLength)
                throw ir::CompileError("field '" + $1 + "' has " + std::to_string(n) +
                                       ($2 == ir::Type::STRING ? " bytes" : " elements") + "; the limit is " +
                                       std::to_string(ir::kMaxFieldLength), @4);
              $$.name = $1; $$.type = $2; $$.rlen = ir::typeSize($2); $$.rarray = n;
            }
          ;

rational: DECIMAL SLASH DECIMAL { $$ = ratOf($1, $3, @1); }
        | DECIMAL { $$ = ir::Rational(toCount($1, @1)); }
        | FLOAT { if ($1[0] == '-') throw SyntaxError("unexpected negative number " + $1, @1);
                  double d = strtod($1.c_str(), nullptr); if (!(d < 2147483648.0)) throw SyntaxError("decimal number " + $1 + " is out of range", @1); $$ = ir::rationalize(d); }
        ;

select: SELECT select_list STREAM stream_name FROM sexpr opt_select_file opt_retention opt_volatile opt_publish {
          const std::string& name = $4.first;
          ir::Query q; q.id = name; q.loc = @1;
          if (q.id == "OUT_OF_BUSSINESS") throw ir::CompileError("OUT_OF_BUSSINESS is reserved stream name.", @4);
          q.program = std::move($6.p);
          int i = 0;
          for (auto& prog : $2) {
            ir::Field f;
            f.program = std::move(prog);
            q.schema.push_back(std::move(f));
          }
          q.filename = std::move(ctx.pendingFile);
          if (ctx.pendingRetention.second >= 0) {
            q.retentionCapacity = ctx.pendingRetention.first;
            q.retentionSegments = ctx.pendingRetention.second;
          } else {
            q.policyCapacity = ctx.pendingRetention.first;
          }
          if (ctx.pendingVolatile) q.makeVolatile();
          q.publish = std::move($10);
          q.isPersistent = ctx.pendingPersistent;
          ctx.pendingFile.clear(); ctx.pendingRetention = {0, 0}; ctx.pendingVolatile = ctx.pendingPersistent = false;
          const int n = $4.second;  // 0: an ordinary SELECT
          std::vector<ir::Query> windows;
          if (!ctx.aggs.empty()) {
            if (n) throw ir::CompileError("history aggregates (MIN(x : W)) inside a stream generator are not supported", @1);
            if (!$6.plainName)
              throw ir::CompileError("MIN/MAX/AVG/SUMC(x : W) need FROM to be one plain stream; name the expression with its own SELECT", @6);
            windows = historyWindows(ctx, q);
          }
          if (n == 0) {
            if (!ctx.gen.empty()) throw ir::CompileError("'$' is used outside a stream generator (STREAM " + name + "[N])", @1);
            for (auto& f : q.schema) f.name = name + "_" + std::to_string(i++);
            ctx.out->push_back(std::move(q));
            for (auto& w : windows)
              if (!findQuery(ctx, w.id)) ctx.out->push_back(std::move(w));
            ctx.lastSelectCount = 1;
          } else {
            // STREAM name[N]: N ordinary streams name$0 .. name$N-1, `$` their ordinal.
            if (ctx.gen.empty()) throw ir::CompileError("stream generator " + name + "[" + std::to_string(n) + "] uses no '$'", @4);
            if (!q.filename.empty())
              throw ir::CompileError("a stream generator takes no FILE directive: one file cannot hold " + std::to_string(n) + " streams", @1);
            for (int k = 0; k < n; ++k) {
              ir::Query g = q;
              g.id = name + "$" + std::to_string(k);
              g.family = name;
              g.program = instantiate(ctx, q.program, k, true, @6);
              int fi = 0;
              for (auto& f : g.schema) {
                f.name = g.id + "_" + std::to_string(fi++);
                f.program = instantiate(ctx, f.program, k, false, @2);
              }
              if (findQuery(ctx, g.id)) throw ir::CompileError("generated stream " + g.id + " collides with a stream of that name", @4);
              ctx.out->push_back(std::move(g));
            }
            ctx.lastSelectCount = size_t(n);
          }
          ctx.gen.clear();
          ctx.aggs.clear();
        }
      ;

stream_name: ID { $$ = {$1, 0}; }
           | ID LBRACK DECIMAL RBRACK {
               const int n = toCount($3, @3);
               if (n <= 0) throw ir::CompileError("stream generator " + $1 + "[" + $3 + "] needs a positive size", @3);
               if (n > ir::kMaxGeneratorSize)
                 throw ir::CompileError("stream generator " + $1 + "[" + $3 + "] is larger than the limit of " +
                                        std::to_string(ir::kMaxGeneratorSize) + " streams", @3);
               $$ = {$1, n};
             }
           ;

opt_select_file: %empty
               | FILE_KW STRING {
                   if ($2.empty()) throw ir::CompileError("directive filename must not be empty", @2);
                   ctx.pendingFile = $2;
                 }
               ;

opt_retention: %empty
             | RETENTION DECIMAL { ctx.pendingRetention = {retentionCapacity($2, @2), -1}; }
             | RETENTION DECIMAL DECIMAL { ctx.pendingRetention = {retentionCapacity($2, @2), toCount($3, @3)}; }
             ;

opt_publish: %empty { $$.clear(); }
           | PUBLISH STRING { checkMqttUrl($2, @2); $$ = $2; }
           ;

opt_volatile: %empty | VOLATILE { ctx.pendingVolatile = true; } | PERSISTENT { ctx.pendingPersistent = true; } ;

select_list: STAR {
               $$.push_back({ir::Token(ir::Op::PUSH_TSCAN, std::string("*"))});
             }
           | ID DOT STAR {
               $$.push_back({ir::Token(ir::Op::PUSH_TSCAN, $1 + ".*")});
             }
           | expr { $$.push_back(checked($1, @1).p); }
           | select_list COMMA STAR { throw SyntaxError("'*' must be the only item of a SELECT list", @3); }
           | select_list COMMA expr {
               if ($1.size() == 1 && !$1[0].empty() && $1[0][0].op == ir::Op::PUSH_TSCAN)
                 throw SyntaxError("'*' must be the only item of a SELECT list", @2);
               $$ = std::move($1); $$.push_back(checked($3, @3).p);
             }
           ;

expr: operand { $$ = std::move($1); }
    | expr PLUS expr { $$ = binary(std::move($1), $3, ir::Op::ADD, @2); }
    | expr MINUS expr {
        if ($3.top == ir::Op::ADD)
          warn(ctx, @2, "'a - b + c' groups as a - (b + c) here, the book reads (a - b) + c; add parentheses");
        $$ = binary(std::move($1), $3, ir::Op::SUBTRACT, @2);
      }
    | expr STAR expr { $$ = binary(std::move($1), $3, ir::Op::MULTIPLY, @2); }
    | expr SLASH expr {
        if ($3.top == ir::Op::MULTIPLY)
          warn(ctx, @2, "'a / b * c' groups as a / (b * c) here, the book reads (a / b) * c; add parentheses");
        $$ = binary(std::move($1), $3, ir::Op::DIVIDE, @2);
      }
    | expr CARET expr { $$ = binary(std::move($1), $3, ir::Op::POWER, @2); }
    | NOT expr { $$ = checked(std::move($2), @2); $$.p.push_back(ir::Token(ir::Op::NOT)); $$.bareNumber = false; }
    | MINUS expr %prec UMINUS {
        // A minus directly before a number is part of the literal.
        if ($2.bareNumber) {
          auto& t = $2.p[0];
          if ($2.intOverflow) t.v = int32_t(INT32_MIN);
          else if (auto* iv = std::get_if<int32_t>(&t.v)) t.v = int32_t(-*iv);
          else if (auto* fv = std::get_if<float>(&t.v)) t.v = -*fv;
          $$ = std::move($2); $$.intOverflow = false; $$.bareNumber = false;
        } else {
          $$ = checked(std::move($2), @2); $$.p.push_back(ir::Token(ir::Op::NEGATE));
        }
      }
    | PLUS expr %prec UMINUS { $$ = checked(std::move($2), @2); $$.bareNumber = false; }
    ;

operand: LPAREN expr RPAREN { $$ = checked(std::move($2), @2); $$.bareNumber = false; $$.top = ir::Op::VOID_COMMAND; }
       | DOLLAR { $$.p.push_back(genToken(ctx, "", {{'$'}})); }
       | DECIMAL {
           errno = 0; long long v = strtoll($1.c_str(), nullptr, 10);
           if (errno == ERANGE || v > 2147483648LL || v < INT32_MIN)
             throw SyntaxError("integer literal " + $1 + " is out of range", @1);
           $$.bareNumber = true;
           if (v == 2147483648LL) { $$.intOverflow = true; $$.p.push_back(ir::Token(ir::Op::PUSH_VAL, int32_t(0))); }
           else $$.p.push_back(ir::Token(ir::Op::PUSH_VAL, int32_t(v)));
         }
       | FLOAT { $$.bareNumber = true; $$.p.push_back(ir::Token(ir::Op::PUSH_VAL, strtof($1.c_str(), nullptr))); }
       | STRING { $$.p.push_back(ir::Token(ir::Op::PUSH_VAL, $1)); }
       | ID { $$.p.push_back(ir::Token(ir::Op::PUSH_ID3, $1)); }
       | ID LBRACK UNDERSCORE RBRACK { $$.p.push_back(ir::Token(ir::Op::PUSH_IDX, $1 + "[_]")); }
       | ID DOT ID { $$.p.push_back(ir::Token(ir::Op::PUSH_ID1, $1 + "." + $3)); }
       | ID LBRACK gexpr RBRACK {
           if (usesDollar($3)) {
             $$.p.push_back(genToken(ctx, $1, std::move($3)));
           } else {
             const int64_t k = evalGen($3, 0, @3);
             if (k < 0) throw ir::CompileError("index " + std::to_string(k) + " of " + $1 + " must not be negative", @3);
             $$.p.push_back(ir::Token(ir::Op::PUSH_ID2, $1 + "[" + std::to_string(k) + "]"));
           }
         }
       | reducer LPAREN expr COLON DECIMAL RPAREN {
           // A record-history aggregate: its window reads the FROM stream (see historyWindows).
           const int w = toCount($5, @5, "window", ir::kMaxHistoryReach);
           const std::string word = reducerWord($1);
           if (w <= 0) throw ir::CompileError("the window of " + word + "(x : W) must be positive, got " + $5, @5);
           Expr e = checked(std::move($3), @3);
           bool reads = false;
           for (auto& t : e.p) {
             if (t.op == ir::Op::PUSH_WINDOW_AGG) throw ir::CompileError("history aggregates do not nest", @1);
             if (t.op == ir::Op::PUSH_IDX)
               throw ir::CompileError(word + "(x : W) over s[_] is not supported; write one aggregate per element", @3);
             if (t.op == ir::Op::PUSH_ID1 || t.op == ir::Op::PUSH_ID2 || t.op == ir::Op::PUSH_ID3 || t.op == ir::Op::PUSH_IDX) reads = true;
           }
           if (!reads) throw ir::CompileError(word + "(x : W) over a constant: the expression must read a field", @3);
           ctx.aggs.push_back({$1, std::move(e.p), w, @1});
           $$.p.push_back(ir::Token(ir::Op::PUSH_WINDOW_AGG, int32_t(ctx.aggs.size() - 1)));
         }
       | reducer {
           throw ir::CompileError("stream reducer " + reducerWord($1) +
                                  " cannot be used in a field expression; use it in FROM", @1);
         }
       | FN_WORD LPAREN args RPAREN { $$ = call($1, std::move($3), @1); }
       | ID LPAREN args RPAREN { $$ = call($1, std::move($3), @1); }
       | TO_STRING LPAREN args RPAREN { $$ = call($1, std::move($3), @1); }
       | TO_STRING LPAREN expr COLON DECIMAL RPAREN {
           const int width = toCount($5, @5);
           if (width == 0) throw ir::CompileError("to_string width 0 must be greater than zero", @5);
           checkLimit("to_string width", width, ir::kMaxFieldLength, @5);
           $$ = checked(std::move($3), @3); $$.bareNumber = false;
           $$.p.push_back(ir::Token(ir::Op::CALL2, ir::IdxPair("to_string", width)));
         }
       ;

reducer: MIN { $$ = ir::Op::STREAM_MIN; } | MAX { $$ = ir::Op::STREAM_MAX; }
       | AVG { $$ = ir::Op::STREAM_AVG; } | SUMC { $$ = ir::Op::STREAM_SUM; } ;

// Generator index expressions: integers, `$`, + - * and parentheses.
gexpr: DECIMAL { $$.push_back({'n', toCount($1, @1, "index")}); }
     | DOLLAR { $$.push_back({'$'}); }
     | LPAREN gexpr RPAREN { $$ = std::move($2); }
     | gexpr PLUS gexpr { $$ = genBinary(std::move($1), $3, '+'); }
     | gexpr MINUS gexpr { $$ = genBinary(std::move($1), $3, '-'); }
     | gexpr STAR gexpr { $$ = genBinary(std::move($1), $3, '*'); }
     ;

args: expr { $$.push_back(std::move($1)); }
    | args COMMA expr { $$ = std::move($1); $$.push_back(std::move($3)); }
    ;

// FROM: `+` is loosest; then the shifts `>` and `-`, which chain; then `#`;
// then the postfix forms `& % @ .reducer`, which chain; then primaries.
sexpr: sexpr PLUS sshift { $$ = sbinary(std::move($1), $3, ir::Token(ir::Op::STREAM_ADD), @2); }
     | sshift { $$ = std::move($1); }
     ;

sshift: sshift GT DECIMAL {
          if ($1.top == ir::Op::STREAM_HASH)
            warn(ctx, @2, "'A # B > N' groups as (A # B) > N here, the book reads A # (B > N); add parentheses");
          const int n = toCount($3, @3, "time shift", ir::kMaxHistoryReach);
          $$ = sunary(std::move($1), {ir::Token(ir::Op::STREAM_TIMEMOVE, int32_t(n))}, @2);
        }
      | sshift MINUS rational {
          if ($3.num <= 0) throw ir::CompileError("SUBTRACT target interval must be positive", @3);
          if (!$3.fitsInt32()) throw ir::CompileError("rational argument out of range", @3);
          if ($1.top == ir::Op::STREAM_HASH)
            warn(ctx, @2, "'A # B - r' groups as (A # B) - r here, the book reads A # (B - r); add parentheses");
          $$ = sunary(std::move($1), {ir::Token(ir::Op::STREAM_SUBTRACT, $3)}, @2);
        }
      | sterm { $$ = std::move($1); }
      ;

sterm: sterm HASH spost { $$ = sbinary(std::move($1), $3, ir::Token(ir::Op::STREAM_HASH), @2); }
     | spost { $$ = std::move($1); }
     ;

spost: spost AMP rational {
         if ($3.num == 0) throw ir::CompileError("DEHASH rational argument must not be zero", @3);
         $$ = sunary(std::move($1), {ir::Token(ir::Op::PUSH_VAL, $3), ir::Token(ir::Op::STREAM_DEHASH_DIV)}, @2);
       }
     | spost PERCENT rational {
         if ($3.num == 0) throw ir::CompileError("DEHASH rational argument must not be zero", @3);
         $$ = sunary(std::move($1), {ir::Token(ir::Op::PUSH_VAL, $3), ir::Token(ir::Op::STREAM_DEHASH_MOD)}, @2);
       }
     | spost AT LPAREN DECIMAL COMMA signed_int RPAREN {
         int k = toCount($4, @4, "AGSE step", ir::kMaxHistoryReach);
         if (k <= 0) throw ir::CompileError("AGSE step must be > 0, got " + std::to_string(k), @4);
         if ($6 == 0) throw ir::CompileError("AGSE window width must not be zero", @6);
         checkLimit("AGSE window width", $6, ir::kMaxHistoryReach, @6);
         $$ = sunary(std::move($1), {ir::Token(ir::Op::STREAM_AGSE, std::pair<int32_t, int32_t>(k, $6))}, @2);
       }
     | spost DOT reducer {
         warn(ctx, @2, "the postfix reducer form is deprecated; write " + reducerWord($3) + "(stream) instead");
         $$ = sunary(std::move($1), {ir::Token($3)}, @2); $$.hasReducer = true;
       }
     | sfactor { $$ = std::move($1); }
     ;

signed_int: DECIMAL { $$ = toSigned($1, @1); }
          | MINUS DECIMAL { $$ = -toCount($2, @2); }
          ;

sfactor: ID { $$.p.push_back(ir::Token(ir::Op::PUSH_STREAM, $1)); $$.plainName = true; }
       | ID LBRACK gexpr RBRACK {
           // A member of a stream family: cell[2] is cell$2.
           if (usesDollar($3)) $$.p.push_back(genToken(ctx, $1, std::move($3)));
           else $$.p.push_back(ir::Token(ir::Op::PUSH_STREAM, familyMember(ctx, $1, evalGen($3, 0, @3), @1)));
         }
       | reducer LPAREN sexpr RPAREN {
           // The function form takes any stream expression: an inner
           // expression becomes a substrate like every other operand.
           $$ = std::move($3); $$.p.push_back(ir::Token($1)); $$.plainName = false; $$.hasReducer = true;
           $$.top = ir::Op::VOID_COMMAND;
         }
       | LPAREN sexpr RPAREN { $$ = std::move($2); $$.plainName = false; $$.top = ir::Op::VOID_COMMAND; }
       ;

rule: RULE ID ON ID WHEN cond DO rule_action {
        if (!ctx.gen.empty()) throw ir::CompileError("'$' is used outside a stream generator", @1);
        if (!ctx.aggs.empty()) throw ir::CompileError("a RULE condition cannot use MIN/MAX/AVG/SUMC(x : W)", ctx.aggs[0].loc);
        ir::Query* q = findQuery(ctx, $4);
        if (!q) throw ir::CompileError("RULE '" + $2 + "' refers to unknown stream '" + $4 + "'", @4);
        if (q->program.empty())
          throw ir::CompileError("Cannot attach rule to declaration stream: " + $4 + " Rule: " + $2, @4);
        ctx.pendingRule.name = $2;
        ctx.pendingRule.condition = std::move($6);
        ctx.pendingRule.loc = @1;
        q->rules.push_back(std::move(ctx.pendingRule));
        ctx.pendingRule = ir::Rule{};
      }
    ;

rule_action: DUMP signed_int TO signed_int opt_dump_retention {
               checkLimit("DUMP bound", $2, ir::kMaxHistoryReach, @2);
               checkLimit("DUMP bound", $4, ir::kMaxHistoryReach, @4);
               if ($2 >= $4)
                 throw ir::CompileError("dump range invalid [" + std::to_string($2) + ".." + std::to_string($4) +
                                        "]: the left end must be smaller than the right end", @2);
               ctx.pendingRule.action = ir::RuleAction::DUMP; ctx.pendingRule.dumpFrom = $2; ctx.pendingRule.dumpTo = $4;
             }
           | SYSTEM STRING { ctx.pendingRule.action = ir::RuleAction::SYSTEM; ctx.pendingRule.command = $2; }
           ;

opt_dump_retention: %empty { ctx.pendingRule.dumpRetention = 0; }
                  | RETENTION DECIMAL {
                      const int n = toCount($2, @2, "DUMP RETENTION", ir::kMaxDumpRetention);
                      ctx.pendingRule.dumpRetention = n;
                    }
                  ;

cond: cond OR cond { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::OR)); }
    | cond AND cond { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::AND)); }
    | cmp { $$ = std::move($1); }
    ;

cmp: cmp EQ cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_EQUAL)); }
    | cmp NE cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_NOT_EQUAL)); }
    | cmp GT cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_GT)); }
    | cmp LT cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_LT)); }
    | cmp GE cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_GE)); }
    | cmp LE cmp { $$ = std::move($1); append($$, $3, @2); $$.push_back(ir::Token(ir::Op::CMP_LE)); }
    | expr { $$ = checked(std::move($1), @1).p; }
    ;

%%

namespace rql::gen {

static Parser::symbol_type yylex(Ctx& ctx) {
  const Lexeme& l = (*ctx.lex)[ctx.next < ctx.lex->size() ? ctx.next++ : ctx.lex->size() - 1];
  const ir::SrcLoc& loc = l.loc;
  switch (l.tok) {
    case Tok::END: return Parser::make_END(loc);
    case Tok::ERROR: throw SyntaxError(l.text, loc);
    case Tok::SELECT: return Parser::make_SELECT(loc);
    case Tok::STREAM: return Parser::make_STREAM(loc);
    case Tok::FROM: return Parser::make_FROM(loc);
    case Tok::DECLARE: return Parser::make_DECLARE(loc);
    case Tok::RETENTION: return Parser::make_RETENTION(loc);
    case Tok::FILE_KW: return Parser::make_FILE_KW(loc);
    case Tok::STORAGE: return Parser::make_STORAGE(loc);
    case Tok::ROTATION: return Parser::make_ROTATION(loc);
    case Tok::SUBSTRAT: return Parser::make_SUBSTRAT(loc);
    case Tok::RULE: return Parser::make_RULE(loc);
    case Tok::DISPOSABLE: return Parser::make_DISPOSABLE(loc);
    case Tok::ONESHOT: return Parser::make_ONESHOT(loc);
    case Tok::HOLD: return Parser::make_HOLD(loc);
    case Tok::TIMEOUT: return Parser::make_TIMEOUT(loc);
    case Tok::MQTT: return Parser::make_MQTT(loc);
    case Tok::PUBLISH: return Parser::make_PUBLISH(loc);
    case Tok::VOLATILE: return Parser::make_VOLATILE(loc);
    case Tok::ON: return Parser::make_ON(loc);
    case Tok::WHEN: return Parser::make_WHEN(loc);
    case Tok::DUMP: return Parser::make_DUMP(loc);
    case Tok::SYSTEM: return Parser::make_SYSTEM(loc);
    case Tok::DO: return Parser::make_DO(loc);
    case Tok::TO: return Parser::make_TO(loc);
    case Tok::TEXTFILE: return Parser::make_TEXTFILE(loc);
    case Tok::BINFILE: return Parser::make_BINFILE(loc);
    case Tok::DEVICE: return Parser::make_DEVICE(loc);
    case Tok::AND: return Parser::make_AND(loc);
    case Tok::OR: return Parser::make_OR(loc);
    case Tok::NOT: return Parser::make_NOT(loc);
    case Tok::MIN: return Parser::make_MIN(l.text, loc);
    case Tok::MAX: return Parser::make_MAX(l.text, loc);
    case Tok::AVG: return Parser::make_AVG(l.text, loc);
    case Tok::SUMC: return Parser::make_SUMC(l.text, loc);
    case Tok::TYPE: return Parser::make_TYPE(l.type, loc);
    case Tok::PROFILE: return Parser::make_PROFILE(l.text, loc);
    case Tok::FN_WORD: return Parser::make_FN_WORD(l.text, loc);
    case Tok::TO_STRING: return Parser::make_TO_STRING(l.text, loc);
    case Tok::ID: return Parser::make_ID(l.text, loc);
    case Tok::DECIMAL: return Parser::make_DECIMAL(l.text, loc);
    case Tok::FLOAT: return Parser::make_FLOAT(l.text, loc);
    case Tok::STRING: return Parser::make_STRING(l.text, loc);
    case Tok::STRING_PROFILE: return Parser::make_STRING_PROFILE(l.text, loc);
    case Tok::LPAREN:
      if (++ctx.depth > kMaxNesting)
        throw ir::CompileError("expression nested more than " + std::to_string(kMaxNesting) +
                               " parentheses deep; the limit is " + std::to_string(kMaxNesting), loc);
      return Parser::make_LPAREN(loc);
    case Tok::RPAREN:
      --ctx.depth;
      return Parser::make_RPAREN(loc);
    case Tok::LBRACK: return Parser::make_LBRACK(loc);
    case Tok::RBRACK: return Parser::make_RBRACK(loc);
    case Tok::COMMA: return Parser::make_COMMA(loc);
    case Tok::DOT: return Parser::make_DOT(loc);
    case Tok::STAR: return Parser::make_STAR(loc);
    case Tok::SLASH: return Parser::make_SLASH(loc);
    case Tok::PLUS: return Parser::make_PLUS(loc);
    case Tok::MINUS: return Parser::make_MINUS(loc);
    case Tok::UNDERSCORE: return Parser::make_UNDERSCORE(loc);
    case Tok::AT: return Parser::make_AT(loc);
    case Tok::HASH: return Parser::make_HASH(loc);
    case Tok::AMP: return Parser::make_AMP(loc);
    case Tok::PERCENT: return Parser::make_PERCENT(loc);
    case Tok::GT: return Parser::make_GT(loc);
    case Tok::LT: return Parser::make_LT(loc);
    case Tok::EQ: return Parser::make_EQ(loc);
    case Tok::NE: return Parser::make_NE(loc);
    case Tok::GE: return Parser::make_GE(loc);
    case Tok::LE: return Parser::make_LE(loc);
    case Tok::COLON: return Parser::make_COLON(loc);
    case Tok::CARET: return Parser::make_CARET(loc);
    case Tok::DOLLAR: return Parser::make_DOLLAR(loc);
    case Tok::PERSISTENT: return Parser::make_PERSISTENT(loc);
  }
  throw SyntaxError("internal lexer error", loc);
}

void Parser::error(const location_type& loc, const std::string& msg) {
  // Name the offending token's text where it has one.
  std::string m = msg;
  const auto& lex = *ctx.lex;
  size_t i = ctx.next ? ctx.next - 1 : 0;
  if (i < lex.size() && !lex[i].text.empty() &&
      (lex[i].tok == Tok::ID || lex[i].tok == Tok::DECIMAL || lex[i].tok == Tok::FLOAT))
    m += " ('" + lex[i].text + "')";
  throw SyntaxError(m, loc);
}

}  // namespace rql::gen

namespace rql {

void parseLine(const LogicalLine& line, std::vector<ir::Query>& out,
               std::unordered_map<std::string, size_t>* firstIndex, std::vector<ir::Warning>* warnings) {
  auto lex = lexLine(line);
  if (!lex.empty() && lex.back().tok == Tok::ERROR) throw SyntaxError(lex.back().text, lex.back().loc);
  if (lex.size() == 1) return;  // only whitespace and comments
  gen::Ctx ctx;
  ctx.lex = &lex;
  ctx.out = &out;
  ctx.firstIndex = firstIndex;
  ctx.warnings = warnings;
  ctx.lineStart = out.size();
  gen::Parser parser(ctx);
  const size_t before = out.size();
  parser.parse();
  for (size_t i = before; i < out.size(); ++i) {
    out[i].text = line.text;
    if (firstIndex) firstIndex->emplace(out[i].id, i);
  }
}

}  // namespace rql
