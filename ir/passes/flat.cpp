#include "flat.hpp"

#include <algorithm>

namespace ir::passes {

FlatIndex::Entry& FlatIndex::entry(const Query& s) {
  auto it = e_.find(&s);
  if (it != e_.end()) return it->second;
  Entry e;
  bool identity = true;
  for (auto& f : s.schema)
    if (f.flatCount() != 1) identity = false;
  if (identity) {
    e.width = int(s.schema.size());
  } else {
    e.first.reserve(s.schema.size());
    int n = 0;
    for (auto& f : s.schema) {
      e.first.push_back(n);
      n += f.flatCount();
    }
    e.width = n;
  }
  return e_.emplace(&s, std::move(e)).first->second;
}

int FlatIndex::width(const Query& s) { return entry(s).width; }

std::optional<Field> FlatIndex::slot(const Query& s, int i) {
  Entry& e = entry(s);
  if (i < 0 || i >= e.width) return std::nullopt;
  size_t fi = size_t(i);
  if (!e.first.empty()) fi = size_t(std::upper_bound(e.first.begin(), e.first.end(), i) - e.first.begin()) - 1;
  const Field& f = s.schema[fi];
  Field out;  // as flattenSchema's slotField, without the name
  out.type = f.type;
  out.rlen = f.rlen;
  out.rarray = f.type == Type::STRING ? f.rarray : 1;
  return out;
}

std::pair<Type, int> FlatIndex::widest(const Query& s) {
  Entry& e = entry(s);
  if (!e.hasWidest) {
    e.widest = ir::widest(s);
    e.hasWidest = true;
  }
  return e.widest;
}

InputView::InputView(FlatIndex& flat, const Query& q) : flat_(flat) {
  if (q.program.empty()) return;
  const Plan& p = flat.plan();
  s1_ = p.find(std::get<std::string>(q.program[0].v));
  if (!s1_) return;
  op_ = q.program.back().op;
  w1_ = flat.width(*s1_);
  switch (op_) {
    case Op::STREAM_ADD:
      s2_ = p.find(std::get<std::string>(q.program[1].v));
      size_ = w1_ + (s2_ ? flat.width(*s2_) : 0);
      break;
    case Op::STREAM_HASH:
      s2_ = p.find(std::get<std::string>(q.program[1].v));
      size_ = w1_;
      break;
    case Op::STREAM_AGSE: size_ = std::abs(std::get<std::pair<int32_t, int32_t>>(q.program.back().v).second); break;
    case Op::STREAM_AVG:
    case Op::STREAM_MIN:
    case Op::STREAM_MAX:
    case Op::STREAM_SUM: size_ = 1; break;
    default: size_ = w1_;
  }
}

std::optional<Field> InputView::slot(int i) {
  if (i < 0 || i >= size_) return std::nullopt;
  switch (op_) {
    case Op::STREAM_ADD:
      if (i < w1_) return flat_.slot(*s1_, i);
      return flat_.slot(*s2_, i - w1_);
    case Op::STREAM_HASH: {
      auto a = flat_.slot(*s1_, i);
      if (!s2_) return a;
      auto b = flat_.slot(*s2_, i);
      if (!b) return a;
      // As interleaveSlots(): the larger type and element size of both operands.
      const int width = std::max(a->byteSize(), b->byteSize());
      a->type = std::max(a->type, b->type);
      a->rlen = a->type == Type::STRING ? 1 : std::max(a->rlen, b->rlen);
      a->rarray = a->type == Type::STRING ? width : 1;
      return a;
    }
    case Op::STREAM_AGSE:
      if (!fixed_) fixed_ = windowSlotOf(flat_.widest(*s1_));
      return fixed_;
    case Op::STREAM_AVG:
    case Op::STREAM_MIN:
    case Op::STREAM_MAX:
    case Op::STREAM_SUM:
      if (!fixed_) fixed_ = reductionSlotOf(flat_.widest(*s1_).first);
      return fixed_;
    default: return flat_.slot(*s1_, i);
  }
}

void referencedStreams(const Program& prog, std::set<std::string>& out) {
  for (auto& t : prog)
    if (t.op == Op::PUSH_ID) out.insert(std::get<IdxPair>(t.v).first);
}

}  // namespace ir::passes
