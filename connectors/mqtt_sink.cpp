// PUBLISH: every record of a stream as one JSON message, QoS 1, in order.
// Records wait in a bounded queue while the broker is away; when it is full
// the oldest go, counted.
#include <cstdio>
#include <deque>
#include <optional>
#include <thread>

#include "connectors/mqtt.hpp"
#include "connectors/mqtt_client.hpp"

namespace connectors {

namespace {
using Clock = std::chrono::steady_clock;
// Offline, a sink over its buffer holds the run this long without progress, then gives up.
constexpr auto kGiveUp = std::chrono::seconds(30);
}  // namespace

struct MqttSink::Impl {
  std::string stream;
  std::vector<ir::Field> schema;
  ir::Layout layout;
  size_t cap = 10000;
  bool wait = false;
  bool gaveUp = false;  // offline: the broker was away kGiveUp; the oldest go until it is back
  std::function<bool()> stopping;
  std::deque<std::string> queue;  // encoded, not yet handed to the client
  uint64_t made = 0, dropped = 0, handed = 0;
  // Offline, over capacity: since when nothing went out, and what had gone out then.
  std::optional<Clock::time_point> stuckSince;
  uint64_t mark = 0;
  std::unique_ptr<Client> client;

  // Hands the queue to the client in order, as far as it takes it.
  void pump() {
    client->tick();
    while (!queue.empty() && client->send(queue.front())) queue.pop_front(), ++handed;
    if (gaveUp && client->connected()) gaveUp = false;  // the broker is back: an offline run waits for it again
  }
  void trim() {
    for (; queue.size() > cap; ++dropped) queue.pop_front();
  }
  bool stop() const { return stopping && stopping(); }
};

MqttSink::MqttSink(const ir::Query& q, const ir::Layout& layout, const MqttSettings& s) : impl_(new Impl) {
  ir::MqttEndpoint ep;
  if (std::string why = ir::parseMqttEndpoint(q.publish, ep); !why.empty()) throw storage::SourceError(why);
  impl_->stream = q.id;
  impl_->schema = q.schema;
  impl_->layout = layout;
  impl_->cap = size_t(std::max<int64_t>(1, s.bufferRecords));
  impl_->wait = s.waitWhenFull;
  impl_->stopping = s.stopping;
  impl_->client = std::make_unique<Client>(ep, s, s.clientId + "-" + q.id + "-pub");
}

MqttSink::~MqttSink() = default;

void MqttSink::publish(int64_t n, const std::string& tExact, const uint8_t* rec, const uint8_t* nulls) {
  Impl& m = *impl_;
  m.queue.push_back(encodeRecord(m.stream, n, tExact, m.schema, m.layout, rec, nulls));
  ++m.made;
  m.pump();
  // Offline the queue may run over until the engine waits in relieve(), between blocks.
  if (!m.wait || m.gaveUp) m.trim();
}

bool MqttSink::relieve(int ms) {
  Impl& m = *impl_;
  const auto until = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    m.pump();
    if (!m.wait || m.queue.size() <= m.cap) {
      m.stuckSince.reset();
      return true;
    }
    if (m.stop()) return true;  // the run ends: what is left is counted there
    const auto now = Clock::now();
    const uint64_t mark = m.client->acked() + m.handed;
    if (!m.stuckSince || mark != m.mark) m.stuckSince = now, m.mark = mark;
    if (now - *m.stuckSince >= kGiveUp) {
      fprintf(stderr,
              "warning: PUBLISH %s (topic %s): the broker took no record for 30 s; the oldest go while it is away\n",
              m.stream.c_str(), m.client->topic().c_str());
      m.gaveUp = true;
      m.stuckSince.reset();
      m.trim();
      return true;
    }
    if (now >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

SinkCounters MqttSink::counters() const {
  SinkCounters c;
  c.published = impl_->client->acked();
  c.dropped = impl_->dropped + impl_->client->failed();
  c.queued = impl_->queue.size() + size_t(std::max(0, impl_->client->inflight()));
  return c;
}

void MqttSink::drain(int ms) {
  Impl& m = *impl_;
  const auto t0 = Clock::now(), until = t0 + std::chrono::milliseconds(ms);
  bool waited = false;
  while (Clock::now() < until) {
    if (m.queue.empty() && m.client->inflight() <= 0) break;
    if (!m.client->connected()) {
      // Never reached a broker (none there, or a first attempt failed): nothing to wait for.
      if (!m.client->everConnected() && !m.client->connecting()) break;
      // Lost it: the client is moving to another broker of the list; a stop request does not wait for that.
      if (m.stop()) break;
      if (!waited)
        fprintf(stderr, "PUBLISH %s (topic %s): waiting up to %d s for a broker to take the last %llu records\n",
                m.stream.c_str(), m.client->topic().c_str(), ms / 1000, (unsigned long long)counters().queued);
      waited = true;
    }
    m.pump();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const SinkCounters c = counters();
  if (c.dropped + c.queued > 0)
    fprintf(stderr,
            "warning: PUBLISH %s (topic %s): %llu of %llu records not delivered (%llu dropped while the broker was "
            "away, %llu still queued at the end of the run)\n",
            m.stream.c_str(), m.client->topic().c_str(), (unsigned long long)(c.dropped + c.queued),
            (unsigned long long)m.made, (unsigned long long)c.dropped, (unsigned long long)c.queued);
  else if (waited)
    fprintf(stderr, "PUBLISH %s (topic %s): all %llu records delivered (%.1f s at the end of the run)\n",
            m.stream.c_str(), m.client->topic().c_str(), (unsigned long long)m.made,
            std::chrono::duration<double>(Clock::now() - t0).count());
}

}  // namespace connectors
