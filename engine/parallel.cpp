// Running independent pipelines side by side. The first blocks of a run
// (and of a changed plan) run serially with every stream timed; then the
// pipelines (computed streams joined by reads) are packed by that cost into
// one bin per thread, and a oneTBB flow graph runs the bins at once, each bin
// in plan order, when the busiest bin is clearly cheaper than the whole.
// A plan that is one pipeline, or whose pipelines cost too little to hand
// out, stays on the plain loop. Serial and parallel write the same artifacts.
#include <algorithm>
#include <numeric>
#include <thread>

#include "engine/engine_impl.hpp"
#include "engine/operators/operators.hpp"

namespace engine {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

int Engine::Impl::threadCount() const {
  return opt.threads > 0 ? opt.threads : int(std::thread::hardware_concurrency());
}

// The pipelines of the computed streams: streams that read one another
// (directly or through others) share a pipeline. Declared sources are read
// before any computed stream runs, so two readers of one source stay apart.
std::vector<std::vector<Stream*>> Engine::Impl::pipelines() const { return pipelinesOf(computed); }

std::vector<std::vector<Stream*>> Engine::Impl::pipelinesOf(const std::vector<Stream*>& computed) const {
  std::vector<size_t> root(streams.size());
  std::iota(root.begin(), root.end(), size_t(0));
  auto find = [&](size_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (auto* s : computed)
    for (int src : s->srcs)
      if (!streams[size_t(src)]->declared) root[find(size_t(src))] = find(size_t(s->index));
  std::vector<std::vector<Stream*>> out;
  std::vector<int> slot(streams.size(), -1);
  for (auto* s : computed) {  // plan order within each pipeline
    const size_t r = find(size_t(s->index));
    if (slot[r] < 0) slot[r] = int(out.size()), out.emplace_back();
    out[size_t(slot[r])].push_back(s);
  }
  return out;
}

// Asked before the streams are set up (the block length depends on it), so
// from the plan's streams rather than the computed ones set up so far.
bool Engine::Impl::independentStreams() const {
  std::vector<Stream*> planned;
  for (auto& s : streams)
    if (!s->declared && !s->removed) planned.push_back(s.get());
  return pipelinesOf(planned).size() > 1;
}

// Starts the measurement: the next blocks run serially, each stream timed.
void Engine::Impl::buildGraph() {
  dropGraph();
  if (threadCount() <= 1 || pipelines().size() < 2) return;  // the plain loop
  if (opt.forceParallel) return placePipelines();            // by stream count, at once
  costBlocks = 0;
  streamNs.assign(streams.size(), {});
}

void Engine::Impl::runStream(Stream& s) {
  if (s.removed) return;
  BlockCtx ctx{block, streams};
  if (s.chain && ops::chainRuns(*s.chain)) {  // the last member runs the chain; the others wait for it
    if (s.chain->members.back() == &s) ops::chainStep(ctx, *s.chain);
    return;
  }
  if (s.chain) ops::rebuildViews(*s.chain);  // the members' own steps read what the chain did not write
  s.step(ctx, s);
}

void Engine::Impl::runStreams() {
  if (costBlocks >= 0) {
    const bool counted = costBlocks++ >= kCostWarmUp;  // the first block warms caches and code
    for (auto* s : computed) {
      const auto t0 = Clock::now();
      runStream(*s);
      if (counted) streamNs[size_t(s->index)].push_back((Clock::now() - t0).count());
    }
    if (costBlocks == kCostWarmUp + kCostBlocks) placePipelines();
    return;
  }
  if (graph) {
    start->try_put(tbb::flow::continue_msg());
    graph->wait_for_all();
    return;
  }
  for (auto* s : computed) runStream(*s);
}

// Longest processing time first: the costliest pipeline goes to the least
// loaded bin. Parallel only when the busiest bin, plus the cost of handing a
// block to the workers, saves a fifth of the whole (or when forced; then
// without timings every stream counts one).
void Engine::Impl::placePipelines() {
  costBlocks = -1;
  const bool timed = !streamNs.empty();
  auto cost = [&](const Stream& s) {  // a median: one block preempted by another process does not decide
    if (!timed) return int64_t(1);
    std::vector<int64_t> v = streamNs[size_t(s.index)];
    if (v.empty()) return int64_t(0);
    std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  struct Pipe {
    std::vector<Stream*> streams;
    int64_t ns = 0;
  };
  std::vector<Pipe> pipes;
  for (auto& p : pipelines()) {
    Pipe pipe{p, 0};
    for (auto* s : p) pipe.ns += cost(*s);
    pipes.push_back(std::move(pipe));
  }
  streamNs.clear();
  std::sort(pipes.begin(), pipes.end(), [](const Pipe& a, const Pipe& b) { return a.ns > b.ns; });
  const size_t binCount = std::min(size_t(threadCount()), pipes.size());
  std::vector<int64_t> load(binCount, 0);
  std::vector<std::vector<Stream*>> members(binCount);
  int64_t total = 0;
  for (auto& p : pipes) {
    const size_t b = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[b] += p.ns;
    total += p.ns;
    members[b].insert(members[b].end(), p.streams.begin(), p.streams.end());
  }
  const int64_t busiest = load.empty() ? 0 : *std::max_element(load.begin(), load.end());
  const bool parallel = binCount > 1 && (opt.forceParallel || (busiest + kHandOffNs) * 5 < total * 4);
  if (opt.verbose && timed)
    fprintf(stdout,
            "scheduler: %zu pipelines, %.3f ms a block of %d slots on one core, %.3f ms on the busiest of %zu: %s\n",
            pipes.size(), double(total) / 1e6, blockSlots, double(busiest) / 1e6, binCount,
            parallel ? "parallel" : "serial");
  if (!parallel) return;
  // Each bin runs its streams in plan order: producers before consumers.
  for (auto& m : members)
    std::sort(m.begin(), m.end(), [](const Stream* a, const Stream* b) { return a->index < b->index; });
  const auto binSources = sourcesOfBins(members);
  threadLimit =
      std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, size_t(threadCount()));
  using namespace tbb::flow;
  graph = std::make_unique<tbb::flow::graph>();
  start = std::make_unique<broadcast_node<continue_msg>>(*graph);
  for (size_t b = 0; b < members.size(); ++b) {
    nodes.push_back(std::make_unique<continue_node<continue_msg>>(
        *graph, [this, bin = members[b], own = binSources[b]](const continue_msg&) {
          int last = 0;  // none runs out here (readSources, binReadsNow)
          bool exhausted = false;
          for (auto* s : own)
            if (binReadsNow[size_t(s->index)]) readSource(*s, last, exhausted);
          for (auto* s : bin) runStream(*s);
          return continue_msg();
        }));
    make_edge(*start, *nodes.back());
  }
}

// The file sources each bin may read in its own task: those only its
// streams read (not live sources: their waits span the block's first slot).
// Under --until-eof only in blocks it surely will not run out in (a source
// that runs out ends the block for every bin): readSources decides.
std::vector<std::vector<Stream*>> Engine::Impl::sourcesOfBins(const std::vector<std::vector<Stream*>>& bins) {
  readInBin.assign(streams.size(), 0);
  std::vector<std::vector<Stream*>> own(bins.size());
  std::vector<int> binOf(streams.size(), -1);
  for (size_t b = 0; b < bins.size(); ++b)
    for (auto* s : bins[b]) binOf[size_t(s->index)] = int(b);
  for (auto* src : declared) {
    const ir::SourceKind kind = src->q->sourceKind;
    if (src->removed || (kind != ir::SourceKind::BINFILE && kind != ir::SourceKind::TEXTSOURCE)) continue;
    int bin = -1;
    bool one = true;
    for (auto* s : computed)
      for (int x : s->srcs)
        if (x == src->index) {
          one = one && (bin < 0 || bin == binOf[size_t(s->index)]);
          bin = binOf[size_t(s->index)];
        }
    if (!one || bin < 0) continue;
    readInBin[size_t(src->index)] = 1;
    own[size_t(bin)].push_back(src);
  }
  return own;
}

void Engine::Impl::dropGraph() {
  readInBin.clear();
  binReadsNow.clear();
  nodes.clear();
  start.reset();
  graph.reset();
  threadLimit.reset();
  costBlocks = -1;
}

}  // namespace engine
