// The flow graph that runs independent streams side by side, and the trial
// that keeps it only when it beats the plain loop.
#include <algorithm>
#include <thread>

#include "engine/engine_impl.hpp"

namespace engine {

int Engine::Impl::threadCount() const {
  return opt.threads > 0 ? opt.threads : int(std::thread::hardware_concurrency());
}

// Whether two computed streams could run at the same time (neither reads the other).
bool Engine::Impl::independentStreams() const {
  std::vector<std::vector<bool>> reach(streams.size(), std::vector<bool>(streams.size(), false));
  for (auto& sp : streams)  // plan order is topological: sources come first
    for (int src : sp->srcs) {
      reach[size_t(sp->index)][size_t(src)] = true;
      for (size_t k = 0; k < streams.size(); ++k)
        if (reach[size_t(src)][k]) reach[size_t(sp->index)][k] = true;
    }
  std::vector<size_t> work;
  for (auto& sp : streams)
    if (!sp->declared && !sp->removed) work.push_back(size_t(sp->index));
  for (size_t i = 0; i < work.size(); ++i)
    for (size_t j = i + 1; j < work.size(); ++j)
      if (!reach[work[i]][work[j]] && !reach[work[j]][work[i]]) return true;
  return false;
}

void Engine::Impl::buildGraph() {
  const int threads = threadCount();
  if (threads <= 1) return;  // serial: plain loop in topological order
  // A graph pays off only when two computed streams can run at the same time.
  if (opt.threads == 0 && !independentStreams()) return;
  threadLimit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, size_t(threads));
  using namespace tbb::flow;
  graph = std::make_unique<tbb::flow::graph>();
  start = std::make_unique<broadcast_node<continue_msg>>(*graph);
  std::vector<continue_node<continue_msg>*> byIndex(streams.size(), nullptr);
  for (auto* s : computed) {
    nodes.push_back(std::make_unique<continue_node<continue_msg>>(*graph, [this, s](const continue_msg&) {
      runStream(*s);
      return continue_msg();
    }));
    byIndex[size_t(s->index)] = nodes.back().get();
  }
  for (auto* s : computed) {
    bool root = true;
    std::vector<int> seen;
    for (int src : s->srcs) {
      if (!byIndex[size_t(src)] || std::find(seen.begin(), seen.end(), src) != seen.end()) continue;
      seen.push_back(src);
      make_edge(*byIndex[size_t(src)], *byIndex[size_t(s->index)]);
      root = false;
    }
    if (root) make_edge(*start, *byIndex[size_t(s->index)]);
  }
}

void Engine::Impl::runStream(Stream& s) {
  if (s.removed) return;
  BlockCtx ctx{block, streams};
  s.step(ctx, s);
}

void Engine::Impl::runStreams(bool serial) {
  if (graph && !serial) {
    start->try_put(tbb::flow::continue_msg());
    graph->wait_for_all();
  } else {
    for (auto* s : computed) runStream(*s);
  }
}

// Small blocks cost more to hand to worker threads than to run, and the
// workers would keep a second core spinning for nothing: drop the graph when
// the plain loop was at least as fast (blocks alternate between the two
// after one warm-up block). Serial and graph write the same artifacts.
void Engine::Impl::timeTrialBlock(std::chrono::steady_clock::duration d, bool serial) {
  if (schedTrial >= kTrialWarmUp) (serial ? serialTimes : graphTimes).push_back(d);
  if (++schedTrial < kTrialBlocks) return;
  // Medians: one block preempted by another process does not decide.
  auto median = [](std::vector<std::chrono::steady_clock::duration> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? std::chrono::steady_clock::duration{} : v[v.size() / 2];
  };
  const auto graphTime = median(graphTimes), serialTime = median(serialTimes);
  const bool keep = graphTime * 5 < serialTime * 4;  // the graph must win by 20%
  if (opt.verbose)
    fprintf(stdout, "scheduler: flow graph %.3f ms, serial %.3f ms a block (medians of %zu blocks each): %s\n",
            std::chrono::duration<double, std::milli>(graphTime).count(),
            std::chrono::duration<double, std::milli>(serialTime).count(), graphTimes.size(),
            keep ? "parallel" : "serial");
  if (!keep) {
    dropGraph();
    if (retrials < kRetrials) retrialAt = slotsRun + (int64_t(64) << retrials++) * blockSlots;
  }
}

void Engine::Impl::dropGraph() {
  nodes.clear();
  start.reset();
  graph.reset();
  threadLimit.reset();
}

}  // namespace engine
