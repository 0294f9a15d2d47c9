#include "tools/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace tools {

bool loopbackAddress(const std::string& hostPort, std::string& why) {
  const size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos || colon + 1 == hostPort.size()) {
    why = "'" + hostPort + "' is not HOST:PORT";
    return false;
  }
  std::string host = hostPort.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0) return true;
  why = "'" + host + "' is not a loopback address; pass --listen-any to serve other hosts";
  return false;
}

namespace {

using Clock = std::chrono::steady_clock;

// A counter that follows a running total the engine keeps.
void follow(prometheus::Counter& c, double total) {
  if (total > c.Value()) c.Increment(total - c.Value());
}

double residentBytes() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE));
}

}  // namespace

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<prometheus::Exposer> exposer;
  prometheus::Family<prometheus::Gauge>& records = prometheus::BuildGauge()
                                                       .Name("retractor_stream_records")
                                                       .Help("Records stored (computed) or read (declared)")
                                                       .Register(*registry);
  prometheus::Family<prometheus::Counter>& nullRecords = prometheus::BuildCounter()
                                                             .Name("retractor_stream_null_records_total")
                                                             .Help("Records with a NULL element")
                                                             .Register(*registry);
  prometheus::Family<prometheus::Counter>& rounded = prometheus::BuildCounter()
                                                         .Name("retractor_stream_rounded_total")
                                                         .Help("RATIONAL results rounded to the nearest fraction")
                                                         .Register(*registry);
  prometheus::Family<prometheus::Counter>& reads = prometheus::BuildCounter()
                                                       .Name("retractor_source_reads_total")
                                                       .Help("Records a live source read")
                                                       .Register(*registry);
  prometheus::Family<prometheus::Counter>& misses = prometheus::BuildCounter()
                                                        .Name("retractor_source_misses_total")
                                                        .Help("Slots a live source had no record for by its deadline")
                                                        .Register(*registry);
  prometheus::Family<prometheus::Counter>& down =
      prometheus::BuildCounter()
          .Name("retractor_source_down_records_total")
          .Help("NULL records of slots a resumed clocked run missed while the engine was down")
          .Register(*registry);
  prometheus::Histogram& late = prometheus::BuildHistogram()
                                    .Name("retractor_slot_lateness_seconds")
                                    .Help("Clocked slots: from the deadline to the slot's last record")
                                    .Register(*registry)
                                    .Add({}, prometheus::Histogram::BucketBoundaries{1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3,
                                                                                     1e-2, 3e-2, 0.1, 0.3, 1, 3});
  prometheus::Family<prometheus::Gauge>& ipcNow =
      prometheus::BuildGauge().Name("retractor_ipc").Help("xqry connections and subscriptions now").Register(*registry);
  prometheus::Family<prometheus::Counter>& ipcTotal = prometheus::BuildCounter()
                                                          .Name("retractor_ipc_events_total")
                                                          .Help("Messages dropped for full queues, clients cut off")
                                                          .Register(*registry);
  prometheus::Counter& jit = prometheus::BuildCounter()
                                 .Name("retractor_jit_compile_seconds_total")
                                 .Help("Time the JIT spent compiling")
                                 .Register(*registry)
                                 .Add({});
  prometheus::Gauge& memory = prometheus::BuildGauge()
                                  .Name("retractor_resident_memory_bytes")
                                  .Help("Resident memory of the engine process")
                                  .Register(*registry)
                                  .Add({});
  std::set<std::string> streams;  // those with metrics now
  Clock::time_point last{};
};

Metrics::Metrics(const std::string& hostPort) : impl_(new Impl) {
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(hostPort, 2);
  } catch (const std::exception& e) {
    throw std::runtime_error("--metrics " + hostPort + ": cannot listen (" + e.what() + ")");
  }
  impl_->exposer->RegisterCollectable(impl_->registry);
}

Metrics::~Metrics() = default;

void Metrics::lateness(int64_t ns) { impl_->late.Observe(double(ns) / 1e9); }

void Metrics::update(const engine::Engine& eng, const ipc::Server::Stats& ipc) {
  Impl& m = *impl_;
  const auto now = Clock::now();
  if (now - m.last < std::chrono::milliseconds(250)) return;
  m.last = now;
  std::set<std::string> seen;
  for (const auto& st : eng.status()) {
    const prometheus::Labels l{{"stream", st.id}};
    seen.insert(st.id);
    m.records.Add(l).Set(double(st.records));
    follow(m.nullRecords.Add(l), double(st.nullRecords));
    follow(m.rounded.Add(l), double(st.rounded));
    if (st.declared) follow(m.down.Add(l), double(st.downRecords));
    if (st.device) {
      follow(m.reads.Add(l), double(st.reads));
      follow(m.misses.Add(l), double(st.misses));
    }
  }
  for (const auto& id : m.streams)  // streams removed from the live plan go from the page too
    if (!seen.count(id)) {
      const prometheus::Labels l{{"stream", id}};
      m.records.Remove(&m.records.Add(l));
      m.nullRecords.Remove(&m.nullRecords.Add(l));
      m.rounded.Remove(&m.rounded.Add(l));
      m.reads.Remove(&m.reads.Add(l));
      m.misses.Remove(&m.misses.Add(l));
      m.down.Remove(&m.down.Add(l));
    }
  m.streams = std::move(seen);
  m.ipcNow.Add({{"what", "clients"}}).Set(double(ipc.clients));
  m.ipcNow.Add({{"what", "subscribers"}}).Set(double(ipc.subscribers));
  follow(m.ipcTotal.Add({{"what", "dropped"}}), double(ipc.dropped));
  follow(m.ipcTotal.Add({{"what", "disconnected"}}), double(ipc.disconnected));
  follow(m.jit, eng.jitSeconds());
  m.memory.Set(residentBytes());
}

}  // namespace tools
