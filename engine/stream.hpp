// Run-time state of one stream, and the block of slots the engine runs at a
// time. Operators (engine/operators/) read and write these; the scheduler
// (engine.cpp) owns them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connectors/mqtt.hpp"
#include "engine/compiled_program.hpp"
#include "engine/history.hpp"
#include "engine/rules.hpp"
#include "ir/exact_sum.hpp"
#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "jit/jit.hpp"
#include "storage/artifacts.hpp"
#include "storage/source.hpp"
#include "storage/store.hpp"

namespace engine {

// A run of grid slots executed together, stream by stream in plan order.
struct Block {
  int slots = 0;
  std::vector<int64_t> t;              // slot j's time, in scheduler ticks
  std::vector<std::vector<char>> due;  // due[i][j]: distinct interval i is due in slot j
  bool allDue = false;                 // one distinct interval: every stream is due in every slot
  uint64_t serial = 0;                 // counts the blocks (Stream::visStepAt)
};

struct Stream;
struct BlockCtx;

// A chain: computed streams where each but the last is read by the next one
// alone, with the same interval and tail, compiled as one function
// (engine/operators/chain.cpp). Every member is still written to its ring;
// the last member's turn runs them all, record by record, once the code is
// adopted (until then, and in blocks the code cannot take, each member runs
// its own step).
struct Chain {
  std::vector<Stream*> members;
  struct External {
    int member, operand;  // members[member] reads this operand from outside the chain
    int64_t lag = 0;      // record n - lag of it (a sliding window's leaving element)
    // Read from the ring as it is during the run (a member's record, or one
    // leaving a window), not through the producer's visible count.
    bool raw = false;
    int from = -1;  // the member whose ring it reads, or -1 (a stream outside the chain)
    // Its records of any run are written before the run starts: a stream's
    // outside the chain, or a member's at least kRun records back. A clean
    // run checks their flags, and the code's clean loop reads them as zeros;
    // the others' flags are read as they are.
    bool settled = true;
    // w: it reads a window A@(1, w) that is a view (Chain::view): its record
    // n is A's records n-w+1 .. n, read in A's ring (from names A).
    int span = 0;
  };
  // Member m makes record n - shift[m] when the first makes n (its tail is
  // shift[m] larger: it reads a member before it that many records back).
  std::vector<int64_t> shift;
  std::vector<External> externals;
  // By member: whether its records are written to its ring (see jit::ChainStep).
  std::vector<char> materialised;
  // By member: a window read by the next member alone, some records back,
  // that is never made: the reader reads its elements in its producer's
  // ring (jit::ChainStep::view). Its own ring gets each block's newest
  // record; viewsStale: the rest of it is out of date (a chain's block ran
  // since it was last rebuilt for the members' own steps).
  std::vector<char> view;
  bool viewsStale = false;
  std::vector<jit::ChainStep::Kind> kinds;  // by member: the step it takes
  // By member: a stream outside the chain reads its visible counts (Stream::vis),
  // which the chain then writes each block; the others' are not read.
  std::vector<char> visRead;
  // Its code: the JIT's, or under --interpret ops::runChainOnVm, which runs
  // vmSteps (the steps the JIT compiles) on the VM.
  jit::ChainFn native = nullptr;
  std::vector<jit::ChainStep> vmSteps;
  // The chains of readers of the first member that come earlier in plan
  // order but run after this chain because their chain ends later: it runs
  // as one only while they do (ops::chainRuns). Held, not their streams: a
  // new plan may drop those (their chain is dissolved, and stays so).
  std::vector<std::shared_ptr<Chain>> laterChains;
  // Scratch of a run: what the code reads and writes (jit/chain_abi.hpp),
  // by member and by external, and the external records' pointers when they
  // are not one stretch of a ring.
  std::vector<jit::ChainMember> memberArgs;
  std::vector<jit::ChainExternal> externalRuns;
  std::vector<const uint8_t*> ext, extNull;
  std::vector<uint8_t> viewScratch;  // a view's records whose span wraps around the ring
  // By external, over the block: its producer's visible counts never fall
  // (kVisRising), and grow by one a slot (kVisStep): a run's records are then
  // all held when its first and last are.
  std::vector<uint8_t> visShape;
  std::vector<int64_t> startCount;
  std::vector<int> upTo;
  // The block's records (a sliding window's NULL index is written after the block).
  std::vector<int64_t> blockNs;
  std::vector<int> blockJs;
  std::vector<std::vector<uint8_t>> windowNulls;  // by member: each record's flag
  std::vector<uint64_t> durableBefore;            // by member: its store's durable records before the block
  // For a sliding fold beyond the exact range, during a run.
  const std::vector<std::unique_ptr<Stream>>* streams = nullptr;
  const int64_t* runNs = nullptr;
};
// One stream's work over a block (chosen once per stream at set-up).
using StepFn = void (*)(BlockCtx&, Stream&);

struct Stream {
  const ir::Query* q = nullptr;
  int index = 0;
  uint64_t serial = 0;  // never reused: background JIT results find their stream by it
  bool declared = false;
  ir::Layout out, in;
  History hist;
  std::vector<int> srcs;  // FROM operands (stream indices)
  int64_t tick = 1;       // interval in scheduler ticks
  size_t tickIndex = 0;   // which distinct interval
  // vis[j]: the records a reader in slot j of the current block sees (for a
  // computed stream: after its own step in slot j; for a source: before it
  // reads in slot j).
  std::vector<int64_t> vis;
  // The block (Block::serial) whose vis its writer made one more a slot
  // throughout (ops::visShape is then known without a scan); any other
  // block's vis is scanned.
  uint64_t visStepAt = 0;
  int64_t due = 0;                      // due slots seen so far
  int wrote = 0;                        // records written in the current block
  int64_t firstIndex = 0;               // an ad hoc stream's first record (logical index)
  int64_t joinAt = 0;                   // an ad hoc stream is due only from this slot (ticks) on
  bool adhoc = false;                   // imported while running (may be removed again)
  bool removed = false;                 // removed: kept only so that stream indices stay valid
  std::string unit;                     // the JIT unit its code belongs to
  std::unique_ptr<ir::Query> ownQuery;  // an ad hoc stream's statement (q points here)
  // sources
  std::unique_ptr<storage::Source> source;
  std::chrono::nanoseconds readTimeout{0};  // DEVICE: its deadline after the slot start
  bool held = false;                        // HOLD: zero records, no read, until a consumer reads it
  // computed: the operator's step and what it needs
  StepFn step = nullptr;
  bool operandPointers = false;            // the program reads the operands' records in place
  std::vector<int> slotBase;               // ... the first input element of each record it reads
  std::vector<char> operandWhole;          // operand k's record lies unchanged in the input record
  std::vector<int> operandBase;            // first input element of operand k
  std::vector<ir::Rational> operandRatio;  // Δ/Δ_operand (index map of +)
  ir::Rational indexRatio;                 // #: Δb/(Δa+Δb); & and %: Δ/r; -: r/Δa (the operator's index map)
  CompiledProgram program;                 // the field program
  bool identity = false;                   // the program copies its input record unchanged (no float, no RATIONAL)
  std::vector<uint8_t> inRec, inNull, outRec, outNull;  // scratch records (VM, gathers)
  int runCap = 1;                                       // records per run (scratch input records held)
  std::vector<uint8_t> zeroRec, nullFlags;              // an absent operand record: zeros, all NULL
  // Fusion: a VOLATILE window read only by one reducer or one SELECT is not
  // materialised; the reader takes the producer's elements and the window
  // keeps its index.
  Stream* fusedInto = nullptr;    // set on the window
  Stream* fusedWindow = nullptr;  // set on the reader
  std::vector<int> fusedLoads;    // a SELECT reader: the window elements its program loads
  std::shared_ptr<Chain> chain;   // set on every member of a chain
  // A chain member not materialised keeps only its newest record in its ring:
  // records before this one are not there (clients and imports wait for new ones).
  int64_t heldFrom = INT64_MIN;
  // stored artifacts: data store and NULL index (a VOLATILE stream has no store)
  storage::FamilyStores files;
  int metaBits = 0;
  std::vector<uint8_t> bitmap, zeroBitmap;
  std::unique_ptr<StreamRules> rules;
  std::unique_ptr<connectors::MqttSink> sink;       // PUBLISH: each record also goes to a topic
  std::optional<connectors::SinkCounters> sinkEnd;  // its counters once closed
  std::string error;
  uint64_t rounded = 0;      // RATIONAL results rounded to the nearest representable fraction
  uint64_t nullRecords = 0;  // records with a NULL element (counted with Options::countNulls)
  uint64_t downRecords = 0;  // a source's NULL records of slots missed while the engine was down
  // Operator state carried from block to block (incremental reducers).
  struct Running {
    bool valid = false;
    int64_t lo = 0, hi = -1;  // flat element positions folded: [lo, hi]
    int64_t sum = 0, sumAbs = 0, present = 0, nulls = 0;
    ir::val::ExactSum exact;  // a window of RATIONAL elements (SUMC, AVG)
    int64_t sinceImages = 0;  // records its ExactSum has kept images
  } running;
};

struct BlockCtx {
  const Block& block;
  std::vector<std::unique_ptr<Stream>>& streams;
  Stream& src(const Stream& s, size_t k) { return *streams[size_t(s.srcs[k])]; }
};

}  // namespace engine
