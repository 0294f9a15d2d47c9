// Stream operators as units: one file each (select, + # & % - > @ and the
// reducers) with the operator's run-time half: its index map, its input
// form, its step over a block, and its set-up. The compile-time half
// (interval, origin, tail, capacity, checks, schema) is the file of the same
// name in ir/operators/.
// The engine calls setUp() once per computed stream; the chosen StepFn then
// runs each block with the operator's code inlined (no per-record dispatch).
#pragma once

#include <memory>
#include <vector>

#include "engine/stream.hpp"

namespace engine::ops {

using Streams = std::vector<std::unique_ptr<Stream>>;

// Fills the stream's index maps and input form and returns its step.
// Throws std::runtime_error for an operator the engine does not run.
StepFn setUp(Stream& s, const Streams& streams);

// One entry per operator file.
StepFn setUpSelect(Stream& s, const Streams& streams);    // FROM A
StepFn setUpAdd(Stream& s, const Streams& streams);       // A + B
StepFn setUpHash(Stream& s, const Streams& streams);      // A # B
StepFn setUpDehash(Stream& s, const Streams& streams);    // A & r, A % r
StepFn setUpSubtract(Stream& s, const Streams& streams);  // A - r
StepFn setUpTimemove(Stream& s, const Streams& streams);  // A > n
StepFn setUpWindow(Stream& s, const Streams& streams);    // A @ (k, w)
StepFn setUpReduce(Stream& s, const Streams& streams);    // .avg .min .max .sumc

// The step of a reducer that folds its fused window (window.cpp sets it).
StepFn fusedReduceStep(const Stream& reducer);

// A reducer's fold of a record of `count` INTEGER elements (4 bytes each, end
// to end) in `type`, element by element as the step folds: the chain's code
// calls it when an integer sum leaves the type's exact range.
void foldIntegerRecord(int32_t op, int32_t type, const uint8_t* data, const uint8_t* nulls, int64_t count,
                       uint8_t* out);
// The reducer's fold of such a record as its own step folds it (in 64-bit
// integers, then in `type` beyond its exact range): false when no element
// is present (the record is NULL).
bool foldIntegers(int32_t op, int32_t type, const uint8_t* data, const uint8_t* nulls, int64_t count, uint8_t* out);
// A sliding .sumc/.avg's value from its integer accumulators, as the fused
// reducer makes it: false beyond the type's exact range (the caller folds
// the window's elements, foldIntegerRecord).
bool slidingResult(int32_t op, int32_t type, int64_t sum, int64_t sumAbs, int64_t present, uint8_t* out);

// Chains (chain.cpp): found once the plan's streams are set up and fused.
std::vector<std::shared_ptr<Chain>> findChains(const std::vector<Stream*>& computed, const Streams& streams,
                                               int blockSlots);
// The chain's steps for the JIT (jit::ChainStep, one a member).
std::vector<jit::ChainStep> chainSteps(const Chain& chain, const Streams& streams);
// The last member's turn: the chain over the block (each member's own step
// when the code is not there or the block starts before a member's origin).
void chainStep(BlockCtx& c, Chain& chain);
// Whether the chain runs as one this block: its code is there, and each
// reader of its first member that runs after it only as part of its own
// chain still does (else every member takes its own step, in plan order).
bool chainRuns(const Chain& chain);
// Whether s is a view in its chain (Chain::view): its ring holds its newest record only.
bool isView(const Stream& s);
// The records of each of its views (Chain::view) that readers may still
// read, rebuilt from the view's producer before the members' own steps run.
void rebuildViews(Chain& chain);
// Its members go back to their own steps for good (a fused window in it is
// materialised again).
void dissolve(Chain& chain);
// A fused window's NULL index entries for k records, `flags[i]` 1 where
// record ns[i] holds a NULL element, else 0 (the chain counts them as it slides).
void fusedWindowIndex(Stream& window, const Stream& producer, const int64_t* ns, const int* js, const uint8_t* flags,
                      int k);

// A producer's visible counts over a block (Stream::vis): kVisRising when
// they never fall, kVisStep when each is one more than the one before.
enum : uint8_t { kVisRising = 1, kVisStep = 2 };
uint8_t visShape(const int64_t* vis, int slots);
// Whether record at0 + i*step (step 0 or 1) is held at slot js[i] (below the
// count visible there, within `window` of it) for each i < k, js rising;
// `shape` (visShape of vis) lets it answer from the first and last slots.
bool heldThroughout(const int64_t* vis, const int* js, int k, int64_t at0, int64_t step, int64_t window, uint8_t shape);

// Whether the input form may be the operands' records in place: every
// operand lies unchanged in the input record and the input has nothing else.
bool pointersFit(const Stream& s, const Streams& streams);

// Fusion: a VOLATILE window read only by one reducer or one SELECT (same
// interval, origin and tail, no rules) is not materialised: the reducer
// folds the producer's elements, the SELECT gathers those it loads.
// Called after every stream is set up; `live` streams may be read later by
// an ad hoc import, which unfuse() handles.
void fuseWindows(const std::vector<Stream*>& computed, const Streams& streams);
// The window goes back to computing its records (a new reader appeared);
// its ring is refilled from the producer's history.
void unfuse(Stream& window, Streams& streams);
// A fused window's newest record, computed on demand (for clients).
bool fusedNewest(Stream& window, const Streams& streams);

}  // namespace engine::ops
