#include "flat.hpp"

#include "ir/operators/operator.hpp"

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

InputView::InputView(FlatIndex& flat, const Query& q) : flat_(flat), q_(&q) {
  if (q.program.empty()) return;
  const Plan& p = flat.plan();
  s1_ = p.find(std::get<std::string>(q.program[0].v));
  if (!s1_) return;
  if (q.program.size() > 1) op_ = ops::streamOperator(q.program.back().op);
  if (op_ && op_->binary) s2_ = p.find(std::get<std::string>(q.program[1].v));
  if (!op_) {
    size_ = flat.width(*s1_);
    return;
  }
  auto width1 = [&] { return flat.width(*s1_); };
  size_ = int(op_->inputWidth(ops::Site{q, q.program.back(), *s1_, s2_, width1}, flat));
}

std::optional<Field> InputView::slot(int i) {
  if (i < 0 || i >= size_) return std::nullopt;
  if (!op_) return flat_.slot(*s1_, i);
  if (op_->uniformInput && fixed_) return fixed_;
  auto width1 = [&] { return flat_.width(*s1_); };
  Field f = op_->inputSlot(ops::Site{*q_, q_->program.back(), *s1_, s2_, width1}, flat_, i);
  if (op_->uniformInput) fixed_ = f;
  return f;
}

void referencedStreams(const Program& prog, std::set<std::string>& out) {
  for (auto& t : prog)
    if (t.op == Op::PUSH_ID) out.insert(std::get<IdxPair>(t.v).first);
}

}  // namespace ir::passes
