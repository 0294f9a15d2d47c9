// What the operator files share: the table from IR operator to set-up, the
// input-form check, and the converting copy of an operand record.
#include <stdexcept>

#include "engine/convert.hpp"
#include "engine/operators/map_op.hpp"
#include "engine/operators/operators.hpp"

namespace engine::ops {

// Every input element belongs to one operand: + concatenates its operands,
// the others read one record of the input's width (# operands must have the
// same schema), so nothing of the scratch record is left from another record.
void copyOperand(const Stream& s, const Stream& src, int k, int64_t idx, int j, uint8_t* in, uint8_t* inNull) {
  const int base = s.operandBase[size_t(k)];
  const int ne = std::min(int(src.out.elems.size()), int(s.in.elems.size()) - base);
  const int covered = std::max(ne, 0);
  const uint8_t *d, *nl;
  const bool held = src.hist.get(idx, src.vis[size_t(j)], d, nl);
  if (held && s.operandWhole[size_t(k)]) {
    // Same element types and sizes: one copy of the bytes and the flags.
    memcpy(in + s.in.elems[size_t(base)].offset, d, size_t(src.out.recordSize));
    memcpy(inNull + base, nl, size_t(covered));
  } else {
    for (int e = 0; e < covered; ++e) {
      const ir::Element& de = s.in.elems[size_t(base + e)];
      if (held) {
        const ir::Element& se = src.out.elems[size_t(e)];
        convertElem(se.type, d + se.offset, se.size, de.type, in + de.offset, de.size);
        inNull[base + e] = nl[e];
      } else {
        memset(in + de.offset, 0, size_t(de.size));
        inNull[base + e] = 1;
      }
    }
  }
}

// Whether `src`'s record lies unchanged at element `base` of `in`.
static bool sameShape(const ir::Layout& src, const ir::Layout& in, int base) {
  if (size_t(base) + src.elems.size() > in.elems.size()) return false;
  if (src.elems.empty()) return true;
  const int off0 = in.elems[size_t(base)].offset;
  for (size_t e = 0; e < src.elems.size(); ++e) {
    const ir::Element& a = src.elems[e];
    const ir::Element& b = in.elems[size_t(base) + e];
    if (a.type != b.type || a.size != b.size || a.offset != b.offset - off0) return false;
  }
  return true;
}

bool pointersFit(const Stream& s, const Streams& streams) {
  if (s.srcs.size() > 2) return false;
  for (size_t k = 0; k < s.srcs.size(); ++k)
    if (!s.operandWhole[k]) return false;
  // Every input element belongs to exactly one operand record.
  size_t total = 0;
  const bool add = s.q->program.back().op == ir::Op::STREAM_ADD;
  for (size_t k = 0; k < s.srcs.size(); ++k) {
    const size_t ne = streams[size_t(s.srcs[k])]->out.elems.size();
    if (add) total += ne;
    else if (ne != s.in.elems.size()) return false;
    else total = ne;
  }
  return total == s.in.elems.size() && !s.in.elems.empty();
}

// Shapes of the operand records against the input record (every operator).
static void operandShapes(Stream& s, const Streams& streams) {
  const bool add = s.q->program.size() > 1 && s.q->program.back().op == ir::Op::STREAM_ADD;
  int base = 0;
  s.operandBase.clear();
  s.operandWhole.clear();
  s.operandRatio.clear();
  for (int src : s.srcs) {
    const Stream& o = *streams[size_t(src)];
    s.operandBase.push_back(add ? base : 0);
    s.operandWhole.push_back(sameShape(o.out, s.in, add ? base : 0));
    s.operandRatio.push_back(s.q->interval / o.q->interval);
    if (add) base += int(o.out.elems.size());
  }
}

StepFn setUp(Stream& s, const Streams& streams) {
  operandShapes(s, streams);
  size_t widest = 1, widestElems = 1;
  for (int src : s.srcs) {
    widest = std::max(widest, size_t(streams[size_t(src)]->out.recordSize));
    widestElems = std::max(widestElems, streams[size_t(src)]->out.elems.size());
  }
  s.zeroRec.assign(widest, 0);
  s.nullFlags.assign(widestElems, 1);
  // Scratch input records for a run (at most about 1 MiB of them).
  s.runCap = int(std::clamp<int64_t>((int64_t(1) << 20) / std::max(1, s.in.recordSize), 1, kRun));
  s.inRec.assign(size_t(std::max(s.in.recordSize, 1)) * size_t(s.runCap), 0);
  s.inNull.assign(std::max<size_t>(s.in.elems.size(), 1) * size_t(s.runCap), 1);
  s.outRec.assign(size_t(std::max(s.out.recordSize, 1)), 0);
  s.outNull.assign(std::max<size_t>(s.out.elems.size(), 1), 1);
  if (s.q->program.size() == 1) return setUpSelect(s, streams);
  switch (s.q->program.back().op) {
    case ir::Op::STREAM_ADD: return setUpAdd(s, streams);
    case ir::Op::STREAM_HASH: return setUpHash(s, streams);
    case ir::Op::STREAM_DEHASH_DIV:
    case ir::Op::STREAM_DEHASH_MOD: return setUpDehash(s, streams);
    case ir::Op::STREAM_SUBTRACT: return setUpSubtract(s, streams);
    case ir::Op::STREAM_TIMEMOVE: return setUpTimemove(s, streams);
    case ir::Op::STREAM_AGSE: return setUpWindow(s, streams);
    case ir::Op::STREAM_AVG:
    case ir::Op::STREAM_MIN:
    case ir::Op::STREAM_MAX:
    case ir::Op::STREAM_SUM: return setUpReduce(s, streams);
    default: throw std::runtime_error(std::string("unsupported operator ") + ir::opName(s.q->program.back().op));
  }
}

}  // namespace engine::ops
