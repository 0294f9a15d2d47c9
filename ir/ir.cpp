#include "ir.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

namespace ir {

int64_t historyRing(int64_t demand) {
  constexpr int64_t kSmall = int64_t(1) << 20;
  const int64_t want = demand * 2 + 8;
  if (want <= kSmall) {
    int64_t cap = 1;
    while (cap < want) cap <<= 1;
    return cap;
  }
  return demand + demand / 16 + 64;
}

// ---------------------------------------------------------------- rationals
static __int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static Rational make128(__int128 n, __int128 d) {
  if (d == 0) throw RefError("bad rational: zero denominator");
  if (d < 0) n = -n, d = -d;
  __int128 g = gcd128(n, d);
  if (g > 1) n /= g, d /= g;
  if (n == 0) d = 1;
  const __int128 lim = std::numeric_limits<int64_t>::max();
  if (n > lim || n < -lim || d > lim)
    throw RefError("Stream interval out of representable range — simplify the plan or use coarser intervals");
  Rational r;
  r.num = int64_t(n);
  r.den = int64_t(d);
  return r;
}

Rational::Rational(int64_t n, int64_t d) { *this = make128(n, d); }

bool Rational::fitsInt32() const {
  return num >= std::numeric_limits<int32_t>::min() && num <= std::numeric_limits<int32_t>::max() &&
         den <= std::numeric_limits<int32_t>::max();
}

std::string Rational::str() const { return std::to_string(num) + "/" + std::to_string(den); }

Rational operator+(const Rational& a, const Rational& b) {
  return make128(__int128(a.num) * b.den + __int128(b.num) * a.den, __int128(a.den) * b.den);
}
Rational operator-(const Rational& a, const Rational& b) {
  return make128(__int128(a.num) * b.den - __int128(b.num) * a.den, __int128(a.den) * b.den);
}
Rational operator*(const Rational& a, const Rational& b) {
  return make128(__int128(a.num) * b.num, __int128(a.den) * b.den);
}
Rational operator/(const Rational& a, const Rational& b) {
  return make128(__int128(a.num) * b.den, __int128(a.den) * b.num);
}
bool operator==(const Rational& a, const Rational& b) { return a.num == b.num && a.den == b.den; }
bool operator!=(const Rational& a, const Rational& b) { return !(a == b); }
bool operator<(const Rational& a, const Rational& b) { return __int128(a.num) * b.den < __int128(b.num) * a.den; }
bool operator<=(const Rational& a, const Rational& b) { return !(b < a); }
bool operator>(const Rational& a, const Rational& b) { return b < a; }
Rational abs(const Rational& a) { return a.num < 0 ? Rational(-a.num, a.den) : a; }
int64_t truncOf(const Rational& a) { return a.num / a.den; }
int64_t floorOf(const Rational& a) {
  int64_t q = a.num / a.den;
  if (a.num % a.den != 0 && a.num < 0) --q;
  return q;
}
int64_t ceilOf(const Rational& a) {
  int64_t q = a.num / a.den;
  if (a.num % a.den != 0 && a.num > 0) ++q;
  return q;
}

Rational rationalize(double x) {
  std::vector<int64_t> qs;
  double v = x;
  for (;;) {
    auto q = int64_t(static_cast<unsigned>(v));
    qs.push_back(q);
    if (qs.size() == 12) break;
    double f = v - double(q);
    if (f < 1e-6) break;
    v = 1.0 / f;
    if (v > 1e6) break;
  }
  Rational r(qs.back());
  for (auto it = qs.rbegin() + 1; it != qs.rend(); ++it) {
    if (r.isZero()) r = Rational(*it);
    else r = Rational(*it) + Rational(1) / r;
  }
  return r;
}

// ---------------------------------------------------------------- types
const char* typeName(Type t) {
  static const char* names[] = {"BYTE",   "INTEGER", "UINT",    "RATIONAL", "FLOAT",
                                "DOUBLE", "INTPAIR", "IDXPAIR", "STRING",   "NULL"};
  return names[int(t)];
}

int typeSize(Type t) {
  switch (t) {
    case Type::BYTE: return 1;
    case Type::INTEGER: return 4;
    case Type::UINT: return 4;
    case Type::RATIONAL: return 8;
    case Type::FLOAT: return 4;
    case Type::DOUBLE: return 8;
    case Type::INTPAIR: return 8;
    case Type::IDXPAIR: return 8;
    case Type::STRING: return 1;
    case Type::NULLT: return 0;
  }
  return 0;
}

// ---------------------------------------------------------------- tokens
namespace {
struct OpInfo {
  const char* name;
  bool argFrom, argField;
  const char* meaning;
};
const OpInfo kOps[] = {
#define TOKEN(name, f, e, meaning) {#name, f != 0, e != 0, meaning},
#include "tokens.def"
#undef TOKEN
};
}  // namespace

const char* opName(Op op) { return kOps[int(op)].name; }
bool opPrintsArgInFrom(Op op) { return kOps[int(op)].argFrom; }
bool opPrintsArgInField(Op op) { return kOps[int(op)].argField; }
const char* opMeaning(Op op) { return kOps[int(op)].meaning; }
std::optional<Op> opFromName(const std::string& name) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (name == kOps[i].name) return Op(i);
  return std::nullopt;
}

template <class T>
static std::string streamFormat(T v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The two renderings differ only for floats (%g against fixed 6 decimals)
// and (name, index) pairs ("s[3]" against "s").
static std::string render(const Value& v, bool printed) {
  return std::visit(
      [printed](auto&& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint8_t>) return std::to_string(unsigned(x));
        else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, Rational>) return x.str();
        else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
          return printed ? streamFormat(x) : std::to_string(x);
        else if constexpr (std::is_same_v<T, std::pair<int32_t, int32_t>>)
          return std::to_string(x.first) + "," + std::to_string(x.second);
        else if constexpr (std::is_same_v<T, IdxPair>)
          return printed ? x.first + "[" + std::to_string(x.second) + "]" : x.first;
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else return "null";
      },
      v);
}

std::string printForm(const Value& v) { return render(v, true); }
std::string textForm(const Value& v) { return render(v, false); }

std::string Token::print() const { return std::string(opName(op)) + "(" + printForm(v) + ")"; }

// ---------------------------------------------------------------- queries
// The FROM operators Query::isReductionRequired() counts (reducers are not among them).
bool isStreamOperator(Op op) {
  switch (op) {
    case Op::STREAM_HASH:
    case Op::STREAM_DEHASH_DIV:
    case Op::STREAM_DEHASH_MOD:
    case Op::STREAM_ADD:
    case Op::STREAM_SUBTRACT:
    case Op::STREAM_TIMEMOVE:
    case Op::STREAM_AGSE: return true;
    default: return false;
  }
}

bool isReducer(Op op) {
  return op == Op::STREAM_AVG || op == Op::STREAM_MIN || op == Op::STREAM_MAX || op == Op::STREAM_SUM;
}

// A reducer counts: over an expression (SUMC(s@(1,5))) it needs its operand cut out.
bool Query::isReductionRequired() const {
  int n = 0;
  for (auto& t : program)
    if (isStreamOperator(t.op) || isReducer(t.op)) ++n;
  return n > 1;
}

std::vector<std::string> Query::dependencies() const {
  std::vector<std::string> out;
  for (auto& t : program)
    if (t.op == Op::PUSH_STREAM) out.push_back(std::get<std::string>(t.v));
  return out;
}

Args getArgs(const Program& p) {
  Args a;
  a.size = int(p.size());
  if (p.size() == 1) {
    a.a1 = textForm(p[0].v);
    a.op = p[0];
  } else if (p.size() == 2) {
    a.a1 = textForm(p[0].v);
    a.op = p[1];
  } else if (p.size() == 3) {
    a.a1 = textForm(p[0].v);
    a.a2 = textForm(p[1].v);
    a.op = p[2];
  } else {
    throw FatalError("query::GetArgs: program too large — " + std::to_string(p.size()) + " tokens, expected at most 3");
  }
  return a;
}

size_t Plan::lookup(const std::string& id) const {
  const size_t n = queries.size();
  auto scan = [&] {
    for (size_t i = 0; i < n; ++i)
      if (queries[i].id == id) return i;
    return n;
  };
  std::lock_guard<std::mutex> g(index_.m);
  auto rebuild = [&] {
    index_.first.clear();
    index_.dups.clear();
    index_.first.reserve(n);
    for (size_t i = 0; i < n; ++i)
      if (!index_.first.emplace(queries[i].id, i).second) index_.dups.emplace(queries[i].id, 0);
    index_.data = queries.data();
    index_.size = n;
    index_.built = true;
  };
  if (!index_.built || index_.data != queries.data() || index_.size != n) rebuild();
  if (index_.dups.count(id)) return scan();  // the first of several, whatever the order now
  auto it = index_.first.find(id);
  if (it != index_.first.end() && it->second < n && queries[it->second].id == id) return it->second;
  // Not where the index says (reordered, renamed in place): scan, and re-index if present.
  size_t i = scan();
  if (i < n) {
    rebuild();
    if (index_.dups.count(id)) return scan();
  }
  return i;
}

Query* Plan::find(const std::string& id) {
  size_t i = lookup(id);
  return i < queries.size() ? &queries[i] : nullptr;
}
const Query* Plan::find(const std::string& id) const {
  size_t i = lookup(id);
  return i < queries.size() ? &queries[i] : nullptr;
}
Query& Plan::get(const std::string& id) {
  if (id.empty()) throw FatalError("qTree::getQuery: query name is empty");
  if (auto* q = find(id)) return *q;
  throw RefError("Referenced Stream in QUERY _not found_ in CORE TREE. (check log)");
}
const Query& Plan::get(const std::string& id) const { return const_cast<Plan*>(this)->get(id); }

int flatWidth(const Query& q) {
  int n = 0;
  for (auto& f : q.schema) n += f.flatCount();
  return n;
}

std::pair<Type, int> widest(const Query& q) {
  Type cur = Type::BYTE;
  int size = 1;
  for (auto& f : q.schema) {
    if (cur <= f.type) {
      cur = f.type;
      // The element size (a STRING's whole width): windows hold single elements.
      size = std::max(size, f.type == Type::STRING ? f.rlen * f.rarray : f.rlen);
    }
  }
  return {cur, size};
}

std::string slotTimeText(const Rational& interval, int64_t slot) {
  __int128 p = __int128(slot) * interval.num, q = interval.den;
  __int128 a = p < 0 ? -p : p, b = q;
  while (b) {
    const __int128 r = a % b;
    a = b;
    b = r;
  }
  if (a > 1) p /= a, q /= a;
  auto text = [](__int128 v) { return std::to_string(int64_t(v)); };
  return q == 1 ? text(p) : text(p) + "/" + text(q);
}

}  // namespace ir
