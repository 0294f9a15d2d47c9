// PUBLISH: every record of a stream as one JSON message, QoS 1, in order.
// Records wait in a bounded queue while the broker is away; when it is full
// the oldest go, counted.
#include <deque>
#include <thread>

#include "connectors/mqtt.hpp"
#include "connectors/mqtt_client.hpp"

namespace connectors {

struct MqttSink::Impl {
  std::string stream;
  std::vector<ir::Field> schema;
  ir::Layout layout;
  size_t cap = 10000;
  bool wait = false;
  std::deque<std::string> queue;  // encoded, not yet handed to the client
  uint64_t dropped = 0;
  std::unique_ptr<Client> client;

  // Hands the queue to the client in order, as far as it takes it.
  void pump() {
    client->tick();
    while (!queue.empty() && client->send(queue.front())) queue.pop_front();
  }
};

MqttSink::MqttSink(const ir::Query& q, const ir::Layout& layout, const MqttSettings& s) : impl_(new Impl) {
  ir::MqttEndpoint ep;
  if (std::string why = ir::parseMqttEndpoint(q.publish, ep); !why.empty()) throw storage::SourceError(why);
  impl_->stream = q.id;
  impl_->schema = q.schema;
  impl_->layout = layout;
  impl_->cap = size_t(std::max<int64_t>(1, s.bufferRecords));
  impl_->wait = s.waitWhenFull;
  impl_->client = std::make_unique<Client>(ep, s, s.clientId + "-" + q.id + "-pub");
}

MqttSink::~MqttSink() = default;

void MqttSink::publish(int64_t n, const std::string& tExact, const uint8_t* rec, const uint8_t* nulls) {
  Impl& m = *impl_;
  m.queue.push_back(encodeRecord(m.stream, n, tExact, m.schema, m.layout, rec, nulls));
  // Offline nothing waits for the slot clock: the run keeps pace with the broker instead.
  // A broker away for 30 s ends the wait: from then on the oldest go, as in a clocked run.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (m.wait && m.queue.size() > m.cap && std::chrono::steady_clock::now() < giveUp) {
    m.pump();
    if (m.queue.size() > m.cap) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (m.queue.size() > m.cap) {
    m.queue.pop_front();
    ++m.dropped;
  }
  m.pump();
}

SinkCounters MqttSink::counters() const {
  SinkCounters c;
  c.published = impl_->client->acked();
  c.dropped = impl_->dropped + impl_->client->failed();
  c.queued = impl_->queue.size() + size_t(std::max(0, impl_->client->inflight()));
  return c;
}

void MqttSink::drain(int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    // No broker (lost, or the first attempt failed): what is queued stays counted, the run ends now.
    if (!impl_->client->connected() && !impl_->client->connecting()) return;
    impl_->pump();
    if (impl_->queue.empty() && impl_->client->inflight() <= 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace connectors
