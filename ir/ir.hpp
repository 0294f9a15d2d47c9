// The plan IR: an ordered list of queries (declared sources, user SELECTs,
// compiler-made substrates and directives), each with an exact rational
// interval, a FROM program and field programs in reverse Polish tokens.
// Everything downstream (dump, DOT, VM, JIT, engine) reads this one structure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace ir {

// ---------------------------------------------------------------- rationals
// Exact time: intervals never go through floating point.
struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  Rational() = default;
  Rational(int64_t n, int64_t d = 1);  // normalises; throws on d == 0
  bool isZero() const { return num == 0; }
  double toDouble() const { return double(num) / double(den); }
  bool fitsInt32() const;
  std::string str() const;  // "n/d", always with the denominator
};
Rational operator+(const Rational& a, const Rational& b);
Rational operator-(const Rational& a, const Rational& b);
Rational operator*(const Rational& a, const Rational& b);
Rational operator/(const Rational& a, const Rational& b);
bool operator==(const Rational& a, const Rational& b);
bool operator!=(const Rational& a, const Rational& b);
bool operator<(const Rational& a, const Rational& b);
bool operator<=(const Rational& a, const Rational& b);
bool operator>(const Rational& a, const Rational& b);
Rational abs(const Rational& a);
int64_t floorOf(const Rational& a);  // rounds toward -inf
int64_t ceilOf(const Rational& a);   // rounds toward +inf
int64_t truncOf(const Rational& a);  // rounds toward zero
// Continued-fraction conversion of a decimal literal (tolerance 1e-6, at most 12 terms).
Rational rationalize(double x);
// Slot `slot` of a stream of interval `interval`, in exact seconds: "p/q", or "p" when whole.
std::string slotTimeText(const Rational& interval, int64_t slot);

// ---------------------------------------------------------------- types
// Ordinal order is the promotion order.
enum class Type : uint8_t { BYTE, INTEGER, UINT, RATIONAL, FLOAT, DOUBLE, INTPAIR, IDXPAIR, STRING, NULLT };
const char* typeName(Type t);
int typeSize(Type t);  // element size in bytes (STRING: 1 per character)
inline bool isIntegral(Type t) { return t == Type::BYTE || t == Type::INTEGER || t == Type::UINT; }
inline bool isNumeric(Type t) { return t <= Type::DOUBLE; }

// ---------------------------------------------------------------- tokens
enum class Op : uint8_t {
#define TOKEN(name, f, e, meaning) name,
#include "tokens.def"
#undef TOKEN
};
const char* opName(Op op);
bool opPrintsArgInFrom(Op op);
bool opPrintsArgInField(Op op);
const char* opMeaning(Op op);
bool isStreamOperator(Op op);  // + # & % - > @ (the binary and shifting FROM operators)
bool isReducer(Op op);         // MIN MAX AVG SUMC over a stream
std::optional<Op> opFromName(const std::string& name);

// Alternatives in type-ordinal order: the index equals the Type ordinal.
using IdxPair = std::pair<std::string, int32_t>;
using Value = std::variant<uint8_t, int32_t, uint32_t, Rational, float, double, std::pair<int32_t, int32_t>, IdxPair,
                           std::string, std::monostate>;
inline Type valueType(const Value& v) { return Type(v.index()); }
std::string printForm(const Value& v);  // dump form: 0.5, s[3], 2/1
std::string textForm(const Value& v);   // names/DOT form: 0.500000, s

struct Token {
  Op op = Op::VOID_COMMAND;
  Value v = int32_t(0);
  Token() = default;
  Token(Op o) : op(o) {}
  Token(Op o, Value val) : op(o), v(std::move(val)) {}
  bool operator==(const Token& o) const { return op == o.op && v == o.v; }
  bool operator!=(const Token& o) const { return !(*this == o); }
  std::string print() const;  // NAME(printForm)
};
using Program = std::vector<Token>;

// ---------------------------------------------------------------- plan
struct Field {
  std::string name;
  int rlen = 4;    // element size in bytes
  int rarray = 1;  // element count (STRING: characters live in rlen*rarray, one flat element)
  Type type = Type::INTEGER;
  Program program;  // empty for declared fields
  int flatCount() const { return type == Type::STRING ? 1 : rarray; }
  int byteSize() const { return rlen * rarray; }
};

struct SrcLoc {
  int line = 0;  // physical line, 1-based; 0 = unknown
  int col = 0;   // 1-based
};

enum class RuleAction : uint8_t { DUMP, SYSTEM };
struct Rule {
  std::string name;
  Program condition;
  RuleAction action = RuleAction::DUMP;
  int dumpFrom = 0, dumpTo = 0, dumpRetention = 0;
  std::string command;
  SrcLoc loc;
};

// Where a declared stream reads from.
enum class SourceKind : uint8_t { NONE, TEXTSOURCE, DEVICE, BINFILE, MQTT };

struct Query {
  std::string id;
  std::string filename;
  Rational interval{0, 1};  // 0 = unresolved; directives keep 0
  int tail = 0;             // startup latency (printed tail=)
  int origin = 0;           // logical origin (printed origin=)
  bool isDisposable = false, isOneShot = false, isHold = false;
  // DEVICE and MQTT: how long a due slot waits for its record (seconds from
  // the slot start); without TIMEOUT the engine's default applies.
  Rational readTimeout{0};
  bool timeoutGiven = false;
  bool isSubstrat = false;
  bool isVolatile = false;
  bool isPersistent = false;     // PERSISTENT: on disk even under DEFAULT VOLATILE
  bool storageExplicit = false;  // a STORAGE clause was written (STORAGE DEFAULT included)
  std::string family;            // STREAM name[N]: the generator's name (instances name$0..)
  std::string historySource;     // MIN(x : W) in the fields: the FROM stream the windows read
  SourceKind sourceKind = SourceKind::NONE;
  std::string publish;  // PUBLISH 'mqtt://...': every record also goes to this topic
  std::vector<Field> schema;
  Program program;  // FROM program; empty for declarations and directives
  std::vector<Rule> rules;
  int retentionSegments = 0, retentionCapacity = 0;
  std::string policyProfile = "DEFAULT";
  int policyCapacity = 0;
  std::string storageProfile = "DEFAULT";
  std::set<std::string> userRefs;   // stream names the user wrote in field/rule programs
  std::set<std::string> fieldRefs;  // the subset written in field programs
  SrcLoc loc;                       // where the statement starts
  std::string text;                 // the statement's logical line, as written

  bool isDirective() const { return !id.empty() && id[0] == ':'; }
  bool isDeclaration() const { return program.empty(); }
  bool isGenerated() const { return id.rfind("STREAM_", 0) == 0; }
  bool isReductionRequired() const;
  // VOLATILE: the records live in a memory ring only.
  void makeVolatile() {
    isVolatile = true;
    policyProfile = "MEMORY";
    policyCapacity = 1;
  }
  std::vector<std::string> dependencies() const;
};

// (arg1, arg2, op) of a reduced FROM program.
struct Args {
  std::string a1, a2;
  Token op;
  int size = 0;
};
Args getArgs(const Program& p);

// Compile-time options: the optimizer switches (all on by default).
struct Options {
  bool dedupSubstrates = true;
  bool shareEquivalentSelects = true;
  bool commutativeAdd = true;
  bool factorHashTimemoves = true;
  bool simplifyExpressions = true;
  bool strictReferences = true;                   // reject references outside FROM and out-of-range indices
  int64_t historyBudgetBytes = int64_t(1) << 30;  // limits.history_memory_mib: all history rings together
  // storage.default_retention {capacity, segments}: the RETENTION of DEFAULT and
  // DIRECT file streams that have none, substrates included; {0, 0} = none.
  std::pair<int, int> defaultRetention{0, 0};
};

// Records the engine keeps for a stream whose consumers need `demand`
// records: small rings get a generous margin and a power-of-two size
// (positions by mask); large ones only a small margin, so a delay of 10^8
// records costs about 10^8 records.
int64_t historyRing(int64_t demand);

// A located compile warning (grouping that differs from the book, deprecated forms).
struct Warning {
  SrcLoc loc;
  std::string message;
};

struct Plan {
  std::vector<Query> queries;
  std::map<std::string, int> maxCapacity;
  Options options;
  bool restrictedSharing = false;  // ad hoc import: share only newly imported ids
  std::set<std::string> newIds;
  std::set<std::string> frozenIds;  // ad hoc import: running streams no pass may rewrite or remove
  std::string sourceFile;           // for error messages
  std::vector<Warning> warnings;    // located compile warnings of the passes (errors under --strict)

  // Lookups by id return the first entry with that id. They go through an
  // id -> position index that is rebuilt when `queries` changed (another
  // buffer or size, or a hit that no longer matches); a miss is confirmed by
  // a scan. Safe to call from several threads.
  Query* find(const std::string& id);
  const Query* find(const std::string& id) const;
  Query& get(const std::string& id);  // throws RefError when absent
  const Query& get(const std::string& id) const;

 private:
  struct IdIndex {
    std::unordered_map<std::string, size_t> first;  // id -> position of its first entry
    std::unordered_map<std::string, size_t> dups;   // ids held more than once (scanned)
    const Query* data = nullptr;
    size_t size = 0;
    bool built = false;
    std::mutex m;
    IdIndex() = default;
    IdIndex(const IdIndex&) {}  // a copy indexes its own vector
    IdIndex& operator=(const IdIndex&) {
      std::lock_guard<std::mutex> g(m);
      built = false;
      return *this;
    }
  };
  mutable IdIndex index_;
  size_t lookup(const std::string& id) const;  // position, or queries.size()
};

// Flat element count of a query's record (STRING fields count once).
int flatWidth(const Query& q);
// widest(q) of the spec: (type, size) over data entries.
std::pair<Type, int> widest(const Query& q);

// ---------------------------------------------------------------- errors
// Three error channels with their own exit codes (see docs/compatibility.md).

struct CompileError : std::runtime_error {  // "Check result" class, exit 71
  SrcLoc loc;
  CompileError(const std::string& m, SrcLoc l = {}) : std::runtime_error(m), loc(l) {}
};
struct RefError : std::runtime_error {  // exception class, exit 4
  SrcLoc loc;
  RefError(const std::string& m, SrcLoc l = {}) : std::runtime_error(m), loc(l) {}
};
struct FatalError : std::runtime_error {  // internal invariant broken, exit 1
  FatalError(const std::string& m) : std::runtime_error(m) {}
};

}  // namespace ir
