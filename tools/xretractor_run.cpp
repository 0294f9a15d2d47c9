// xretractor's run: the engine's options, the run with its clients, the progress line and the end-of-run -v report.
#include <fmt/core.h>
#include <strings.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "engine/engine.hpp"
#include "tools/serve.hpp"
#include "tools/xretractor.hpp"

namespace xretractor {

namespace {

// --jit-cache DIR, else RDB_JIT_CACHE (unset or empty: not given), else the
// user's cache directory; "off" (any case): none. `asked`: named by the user.
std::string jitCacheDir(const std::string& arg, bool& asked) {
  const char* env = getenv("RDB_JIT_CACHE");
  const std::string chosen = !arg.empty() ? arg : env ? env : "";
  asked = !chosen.empty();
  if (strcasecmp(chosen.c_str(), "off") == 0) return "";
  if (!chosen.empty()) return chosen;
  if (const char* x = getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/retractor/jit";
  if (const char* h = getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/retractor/jit";
  return "";
}

engine::Options engineOptions(const RunArgs& a) {
  engine::Options opt;
  opt.limit = a.limit;
  opt.noClock = a.noClock;
  opt.untilEof = a.untilEof;
  opt.deviceTimeout = gConfig.sourcesTimeoutS;
  opt.mqtt.user = gConfig.mqttUser;
  opt.mqtt.password = gConfig.mqttPassword;
  opt.mqtt.caFile = gConfig.mqttCaFile;
  opt.mqtt.bufferRecords = gConfig.mqttBufferRecords;
  opt.mqtt.keepAliveS = gConfig.mqttKeepAliveS;
  opt.mqtt.maxPayloadBytes = gConfig.mqttMaxPayloadBytes;
  opt.mqtt.maxJsonDepth = gConfig.mqttMaxJsonDepth;
  opt.mqtt.drainMs = int(std::min(gConfig.mqttDrainS, 3600)) * 1000;
  // Broker sessions are named after the instance, so two engines on one broker never share one.
  opt.mqtt.clientId = "retractor-" + (a.name.empty() ? std::string("default") : a.name);
  opt.threads = a.threads;
  opt.blockSlots = a.blockSlots;
  opt.fuse = !a.noFuse;
  opt.chains = !a.noChains;
  opt.forceParallel = a.parallel;
  opt.jitTier = a.jitTier == "quick" ? 1 : a.jitTier == "optimised" ? 2 : 0;
  opt.jitCache = jitCacheDir(a.jitCache, opt.jitCacheAsked);
  opt.verbose = a.verbose;
  opt.countNulls = gMetrics != nullptr;
  if (a.checkpointS) opt.checkpointS = *a.checkpointS;
  opt.resume = a.resume;
  opt.stopOnKey = !a.noAnyKey && isatty(0);
  // RDB_INTERPRET=1 selects the VM without touching command lines (CI runs the suite both ways).
  const char* envInterpret = getenv("RDB_INTERPRET");
  opt.interpret = a.interpret || (envInterpret && std::string(envInterpret) == "1");
  return opt;
}

// The progress line of an offline run: slots, records stored, their rate, and
// an ETA when -m says how many slots there are. Four times a second at most.
struct Progress {
  using Clock = std::chrono::steady_clock;
  explicit Progress(int64_t limit) : limit_(limit) {}
  void show(int64_t slots, const engine::Engine& eng) {
    const auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    int64_t records = 0;
    for (auto& st : eng.status())
      if (!st.declared) records += st.records;
    const double secs = std::chrono::duration<double>(now - start_).count();
    std::string line = fmt::format("slots {}", slots);
    if (limit_ > 0) line += fmt::format(" of {} ({:.0f}%)", limit_, 100.0 * double(slots) / double(limit_));
    line += fmt::format(", records {}, {:.0f} records/s", records, secs > 0 ? double(records) / secs : 0.0);
    if (limit_ > 0 && slots > 0) line += fmt::format(", ETA {:.0f} s", secs * double(limit_ - slots) / double(slots));
    fmt::print(stderr, "\r{}\033[K", line);
    shown_ = true;
  }
  void clear() {
    if (shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }
  int64_t limit_;
  Clock::time_point start_ = Clock::now(), last_{};
  bool shown_ = false;
};

}  // namespace

int runEngine(tools::Instance& inst, const ir::Plan& plan, const RunArgs& a, PlanSwitch& sw) {
  try {
    engine::Options opt = engineOptions(a);
    opt.resume = a.resume && !sw.fromClient;  // a plan a client loaded (xqry --reset) starts afresh
    engine::Engine eng(plan, opt);
    eng.prepare();
    if (opt.resume) {  // said under -r too: a resumed run's output starts in the middle
      if (auto r = eng.resumed()) {
        if (!r->fellBack.empty()) fmt::print(stderr, "warning: {}; resumed from {}\n", r->fellBack, r->file);
        fmt::print("resumed {} at slot {} (time {} s)\n", a.queryFile, r->slot, r->time);
      } else {
        fmt::print("no checkpoint of {} to resume: starting afresh\n", a.queryFile);
      }
      fflush(stdout);
    }
    tools::ClientWiring wiring(eng, *inst.server, gStop, a.spinUs, tools::AdHocPolicy{a.allowAdhocSystem});
    wiring.serverHooks().reset = [&](const std::string& text, std::vector<std::string>& ended) -> std::string {
      if (emptyPlanText(text)) {
        sw.toIdle = true;
        gStop.store(true);  // the run ends after this slot
        return "OK";
      }
      ir::Plan next;
      if (std::string err = compileSent(text, a, next); !err.empty()) return err;
      wiring.planChanged();
      return eng.replacePlan(next, ended);
    };
    // -x: hold the processing loop until a client's first command arrives.
    while (a.wait && !inst.server->anyCommandSeen() && !gStop.load()) inst.server->poll(wiring.serverHooks(), 100);
    engine::SlotHooks hooks = wiring.slotHooks();
    if (gMetrics) {  // the numbers go to /metrics from the engine's thread
      auto sample = [&] { gMetrics->update(eng, inst.server->stats()); };
      hooks.waitUntil = [sample, wait = hooks.waitUntil](std::chrono::steady_clock::time_point t) {
        sample();
        wait(t);
      };
      hooks.idle = [sample, serve = hooks.idle](int64_t slots) {
        serve(slots);
        sample();
      };
      hooks.lateness = [](int64_t ns) { gMetrics->lateness(ns); };
    }
    Progress progress(a.limit);
    if (a.noClock && !a.quiet && isatty(2)) {  // offline on a terminal: one line that updates
      hooks.idle = [&, serve = hooks.idle](int64_t slots) {
        serve(slots);
        progress.show(slots, eng);
      };
    }
    using Clock = std::chrono::steady_clock;
    const auto runStart = Clock::now();
    int64_t slots = eng.run(gStop, hooks);
    const auto runEnd = Clock::now();
    progress.clear();
    if (sw.toIdle) inst.server->endSubscriptions();
    else inst.server->shutdown();
    eng.finish();
    if (a.verbose) {
      // The phases apart: a short run's wall time is mostly its start and the disk's flush at the close.
      auto secs = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
      fmt::print("processed {} slots in {:.3f} s (close {:.3f} s)\n", slots, secs(runEnd - runStart),
                 secs(Clock::now() - runEnd));
      const engine::Engine::CloseReport c = eng.closeReport();
      fmt::print("closed {} streams with {} syncs ({} synced together by syncfs)\n", c.streams, c.syncs, c.together);
      // RATIONAL results that were not exactly representable, per stream.
      for (auto& st : eng.status())
        if (st.rounded) fmt::print("rounded: {} {} values to the nearest RATIONAL\n", st.id, st.rounded);
      for (auto& st : eng.status())
        if (st.device) fmt::print("device: {} {} reads, {} misses\n", st.id, st.reads, st.misses);
      if (const auto c = eng.checkpointStats(); c.written)
        fmt::print(
            "checkpoints: {} written, {:.3f} ms each on average, {:.3f} ms the longest, {} bytes; {} made durable off "
            "the slot thread, {:.3f} ms each ({:.3f} ms of CPU)\n",
            c.written, double(c.totalNs) / double(c.written) / 1e6, double(c.longestNs) / 1e6, c.bytes, c.durable,
            c.durable ? double(c.durableNs) / double(c.durable) / 1e6 : 0.0,
            c.durable ? double(c.durableCpuNs) / double(c.durable) / 1e6 : 0.0);
      if (eng.missedSlots())
        fmt::print(
            "resume: {} slots were due while the engine was down (caught up; DEVICE and MQTT sources read "
            "NULL records for them)\n",
            eng.missedSlots());
      for (auto& st : eng.status())
        if (st.outOfRange) fmt::print("source: {} {} values out of range, stored NULL\n", st.id, st.outOfRange);
      for (auto& st : eng.status()) {
        if (st.mqtt)
          fmt::print("mqtt: {} {} received, {} malformed, {} dropped\n", st.id, st.received, st.malformed, st.dropped);
        if (st.publishes)
          fmt::print("publish: {} {} acknowledged, {} dropped, {} still queued\n", st.id, st.published,
                     st.publishDropped, st.publishQueued);
      }
    }
    if (eng.backgroundAbandoned() && !sw.toIdle) {  // an ad hoc JIT compile still runs: do not wait for it
      fflush(stdout);
      fflush(stderr);
      std::_Exit(0);
    }
  } catch (const engine::EngineError& e) {
    if (sw.fromClient) inst.server->endSubscriptions();
    else inst.server->shutdown();
    fmt::print(stderr, "\nFATAL: {}\n", e.what());
    return kExitFatal;
  }
  return 0;
}

}  // namespace xretractor
