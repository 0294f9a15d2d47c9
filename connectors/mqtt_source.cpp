// A declared stream on an MQTT topic. Messages are decoded as they arrive
// (on the client library's thread); each slot takes one record.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>

#include "connectors/mqtt.hpp"
#include "connectors/mqtt_client.hpp"

namespace connectors {

namespace {

// Records published with their logical index wait here, at most this many.
constexpr size_t kMaxIndexed = 100000;
// Malformed payloads logged one by one, then every this many.
constexpr uint64_t kLogEvery = 1000;

class MqttSource : public storage::Source {
 public:
  MqttSource(const ir::Query& q, const ir::Layout& l, const MqttSettings& s)
      : Source(q.filename, l, false),
        stream_(q.id),
        schema_(q.schema),
        interval_(q.interval.str()),
        alignment_(s.alignment ? s.alignment : std::make_shared<IndexAlignment>()),
        maxBytes_(s.maxPayloadBytes),
        maxDepth_(s.maxJsonDepth) {
    ir::MqttEndpoint ep;
    if (std::string why = ir::parseMqttEndpoint(q.filename, ep); !why.empty()) throw storage::SourceError(why);
    topic_ = ep.topic;
    efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    latest_.resize(size_t(l.recordSize));
    latestNulls_.resize(l.elems.size());
    scratch_.resize(size_t(l.recordSize));
    scratchNulls_.resize(l.elems.size());
    client_ = std::make_unique<Client>(ep, s, s.clientId + "-" + q.id + "-src",
                                       [this](const char* d, size_t n) { arrived(d, n); });
  }
  ~MqttSource() override {
    client_.reset();  // no callback after this
    if (efd_ >= 0) ::close(efd_);
  }

  void next(uint8_t* rec, uint8_t* nulls) override {
    client_->tick();
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t slot = int64_t(reads_ + misses_);  // this read's record index
    if (indexed_) {
      align(slot, false);
      auto it = expected_ >= 0 ? pending_.find(expected_) : pending_.end();
      if (expected_ >= 0) ++expected_;  // that index is this slot's, taken or missed
      if (it != pending_.end()) {
        memcpy(rec, it->second.data(), size_t(layout_.recordSize));
        memcpy(nulls, it->second.data() + layout_.recordSize, layout_.elems.size());
        pending_.erase(pending_.begin(), std::next(it));
        ++reads_;
        return;
      }
      // Older indices still waiting are too late now.
      while (!pending_.empty() && pending_.begin()->first < expected_) {
        pending_.erase(pending_.begin());
        ++dropped_;
      }
    } else if (fresh_) {
      memcpy(rec, latest_.data(), latest_.size());
      memcpy(nulls, latestNulls_.data(), latestNulls_.size());
      fresh_ = false;
      ++reads_;
      return;
    }
    allNull(rec, nulls);
    ++misses_;
  }

  // A topic that never delivered a record does not hold the slots up: the
  // deadline applies from its first record on, or from the first indexed
  // record of a source of its interval (its own first one is due then too).
  int waitFd() const override {
    if (spoke_.load(std::memory_order_acquire)) return efd_;
    std::lock_guard<std::mutex> lock(alignment_->mu);
    return alignment_->offset.count(interval_) ? efd_ : -1;
  }
  bool fill() override {
    uint64_t v;
    while (::read(efd_, &v, sizeof v) > 0) {
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (indexed_) {
      align(int64_t(reads_ + misses_), true);
      return expected_ >= 0 && pending_.count(expected_) > 0;
    }
    return fresh_;
  }
  uint64_t reads() const override { return reads_; }
  // Messages are acknowledged as they arrive: those after a checkpoint are
  // gone with a killed engine; the counters go on.
  void save(storage::ByteWriter& w) const override {
    Source::save(w);
    std::lock_guard<std::mutex> g(mu_);
    for (uint64_t v : {reads_, misses_, received_, malformed_, dropped_}) w.u64(v);
  }
  void restore(storage::ByteReader& r) override {
    Source::restore(r);
    std::lock_guard<std::mutex> g(mu_);
    for (uint64_t* v : {&reads_, &misses_, &received_, &malformed_, &dropped_}) *v = r.u64();
  }
  uint64_t misses() const override { return misses_; }

  SourceCounters counters() const {
    std::lock_guard<std::mutex> lock(mu_);
    SourceCounters c;
    c.received = received_;
    c.malformed = malformed_;
    c.dropped = dropped_;
    c.connected = client_->connected();
    return c;
  }

 private:
  // The index this read wants: from the engine's offset for this interval,
  // which the first indexed record of any of its sources sets: only in
  // fill(), which the engine calls on every due source before it waits and
  // reads, so that all of them wait for their record of that slot.
  void align(int64_t slot, bool mayStart) {
    if (expected_ >= 0) return;
    std::lock_guard<std::mutex> lock(alignment_->mu);
    auto it = alignment_->offset.find(interval_);
    if (it == alignment_->offset.end()) {
      if (pending_.empty() || !mayStart) return;
      it = alignment_->offset.emplace(interval_, slot - pending_.begin()->first).first;
    }
    expected_ = slot - it->second;
    while (!pending_.empty() && pending_.begin()->first < expected_) {  // before this engine's first slot
      pending_.erase(pending_.begin());
      ++dropped_;
    }
  }

  // On the client library's thread. Nothing may escape it: the message is
  // acknowledged when this returns, and a payload that killed the engine
  // would come back at every restart (QoS 1, persistent session).
  void arrived(const char* d, size_t n) noexcept {
    bool counted = false;
    try {
      take(d, n, counted);
    } catch (const std::exception& e) {
      malformed(d, n, e.what(), !counted);
    } catch (...) {
      malformed(d, n, "cannot be taken", !counted);
    }
  }

  void take(const char* d, size_t n, bool& counted) {
    // Limits first, without parsing: the payload need not even be copied.
    std::string why = checkPayload(std::string_view(d, n), maxBytes_, maxDepth_);
    int64_t index = -1;
    if (!why.empty() ||
        !decodePayload(std::string(d, n), schema_, layout_, scratch_.data(), scratchNulls_.data(), index, why)) {
      counted = true;
      return malformed(d, n, why.c_str(), true);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++received_;
      counted = true;
      if (index >= 0) {
        indexed_ = true;
        if ((expected_ >= 0 && index < expected_) || pending_.count(index)) {
          ++dropped_;  // a duplicate (redelivered after a failover) or too late for its slot
          return;
        }
        std::vector<uint8_t> r(scratch_.begin(), scratch_.end());
        r.insert(r.end(), scratchNulls_.begin(), scratchNulls_.end());
        pending_.emplace(index, std::move(r));
        if (pending_.size() > kMaxIndexed) {
          pending_.erase(pending_.begin());
          ++dropped_;
        }
      } else {
        if (fresh_) ++dropped_;  // never taken: a newer one came first
        latest_.swap(scratch_);
        latestNulls_.swap(scratchNulls_);
        fresh_ = true;
      }
    }
    spoke_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    (void)!::write(efd_, &one, sizeof one);
  }

  // Counted (with the message, unless it already was); logged with its first
  // bytes only, made printable: the first ten, then every kLogEvery-th.
  void malformed(const char* d, size_t n, const char* why, bool count) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (count) ++received_;
    if (++malformed_ > 10 && malformed_ % kLogEvery != 0) return;
    char text[4 * 80 + 1], more[40] = "";
    size_t k = 0;
    for (size_t i = 0; i < std::min<size_t>(n, 80); ++i) {
      const unsigned char c = static_cast<unsigned char>(d[i]);
      if (c >= 0x20 && c < 0x7f) text[k++] = char(c);
      else k += size_t(snprintf(text + k, 5, "\\x%02x", c));
    }
    text[k] = 0;
    if (n > 80) snprintf(more, sizeof more, "... (%zu bytes)", n);
    fprintf(stderr, "warning: MQTT source %s (topic %s): malformed payload #%llu: %.200s: %s%s\n", stream_.c_str(),
            topic_.c_str(), (unsigned long long)malformed_, why, text, more);
  }

  std::string stream_, topic_;
  std::vector<ir::Field> schema_;
  std::string interval_;
  std::shared_ptr<IndexAlignment> alignment_;
  int64_t maxBytes_;
  int maxDepth_;
  int efd_ = -1;
  mutable std::mutex mu_;
  std::vector<uint8_t> latest_, latestNulls_, scratch_, scratchNulls_;
  bool fresh_ = false;
  std::atomic<bool> spoke_{false};
  bool indexed_ = false;
  int64_t expected_ = -1;
  std::map<int64_t, std::vector<uint8_t>> pending_;  // record bytes, then its NULL flags
  uint64_t reads_ = 0, misses_ = 0, received_ = 0, malformed_ = 0, dropped_ = 0;
  std::unique_ptr<Client> client_;  // last: destroyed first
};

}  // namespace

std::unique_ptr<storage::Source> openMqttSource(const ir::Query& q, const ir::Layout& layout, const MqttSettings& s) {
  return std::make_unique<MqttSource>(q, layout, s);
}

bool mqttSourceCounters(const storage::Source& s, SourceCounters& out) {
  const auto* m = dynamic_cast<const MqttSource*>(&s);
  if (!m) return false;
  out = m->counters();
  return true;
}

}  // namespace connectors
