#include "tools/serve.hpp"

#include <thread>

#include "storage/element_text.hpp"
#include "tools/adhoc.hpp"

namespace tools {

namespace {

ipc::StreamInfo infoOf(const engine::StreamStatus& s) {
  ipc::StreamInfo i;
  i.id = s.id;
  i.duration = s.interval.str();
  i.size = s.bytes;
  i.count = s.records;
  i.location = s.location;
  i.cap = s.capacity;
  return i;
}

ipc::StreamDetail detailOf(const engine::StreamStatus& s) {
  ipc::StreamDetail d;
  d.info = infoOf(s);
  d.fields = s.fields;
  d.isDeclaration = s.declared;
  d.isGenerated = s.generated;
  d.queryTokens = s.programTokens;
  d.processedLine = s.statement.empty() ? "{not found}" : s.statement;
  d.countRecords = s.records;
  d.rounded = s.rounded;
  d.isDevice = s.device;
  d.reads = s.reads;
  d.misses = s.misses;
  if (s.mqtt)
    d.counters = {
        {"received", s.received}, {"malformed", s.malformed}, {"dropped", s.dropped}, {"connected", s.connected}};
  if (s.outOfRange) d.counters.push_back({"out_of_range", s.outOfRange});
  if (s.downRecords) d.counters.push_back({"down_records", s.downRecords});
  if (s.publishes)
    d.counters.insert(
        d.counters.end(),
        {{"published", s.published}, {"publish_dropped", s.publishDropped}, {"publish_queued", s.publishQueued}});
  return d;
}

// The slot time of record n, exact, as "p/q" seconds ("p" when whole): a
// source reads record n in slot n x interval, a computed stream writes it in
// slot (n + 1 + tail) x interval.
std::string slotTime(const engine::StreamStatus& s, int64_t n) {
  return ir::slotTimeText(s.interval, s.declared ? n : n + 1 + s.tail);
}

ipc::RecordText recordText(const ir::Layout& layout, const uint8_t* data, const uint8_t* nl) {
  ipc::RecordText r;
  for (size_t e = 0; e < layout.elems.size(); ++e) {
    const ir::Element& el = layout.elems[e];
    r.values.push_back(storage::elementText(el.type, data + el.offset, el.size));
    r.nulls.push_back(nl[e] != 0);
  }
  return r;
}

// At most this many records are replayed at once (older ones are reported as lost).
constexpr int64_t kMaxReplay = 100000;

}  // namespace

ClientWiring::ClientWiring(engine::Engine& eng, ipc::Server& server, std::atomic<bool>& stop, int spinUs,
                           AdHocPolicy policy)
    : eng_(eng), srv_(server), stop_(stop), spin_(spinUs), policy_(policy) {
  server_.list = [this] {
    std::vector<ipc::StreamInfo> out;
    for (auto& s : eng_.status()) out.push_back(infoOf(s));
    return out;
  };
  server_.detail = [this](const std::string& id) -> std::optional<ipc::StreamDetail> {
    auto s = eng_.status(id);
    if (!s) return std::nullopt;
    return detailOf(*s);
  };
  server_.exists = [this](const std::string& id) { return eng_.status(id).has_value(); };
  server_.adhoc = [this](const std::string& text) { return importAdHoc(eng_, text, policy_); };
  server_.kill = [this] { stop_.store(true); };
  server_.remove = [this](const std::string& id) {
    timing_.clear();
    return eng_.removeStream(id);
  };
  server_.replay = [this](const std::string& id, int64_t from) {
    ipc::Replay out;
    const auto st = eng_.status(id);
    const auto [oldest, newest] = eng_.held(id);
    if (oldest <= newest) out.newest = newest;
    if (!st || newest < from) return out;  // nothing held, or `from` is still to come
    const int64_t first = std::max({from, oldest, newest - kMaxReplay + 1});
    out.unavailable = first - from;
    std::vector<uint8_t> data, nulls;
    const ir::Layout* layout = nullptr;
    for (int64_t n = first; n <= newest; ++n) {
      if (!eng_.record(id, n, data, nulls, layout)) {
        ++out.unavailable;
        continue;
      }
      out.records.push_back(recordText(*layout, data.data(), nulls.data()));
      out.records.back().n = n;
      out.records.back().t = slotTime(*st, n);
    }
    return out;
  };
  slots_.waitUntil = [this](std::chrono::steady_clock::time_point deadline) { waitUntil(deadline); };
  slots_.idle = [this](int64_t) { srv_.poll(server_, 0); };
  slots_.listening = [this] { return srv_.anySubscriber(); };
  slots_.afterSlot = [this](const std::vector<const std::string*>& wrote) { publish(wrote); };
}

// Clients are served while the slot waits for its deadline.
void ClientWiring::waitUntil(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (stop_.load()) return;
    if (now >= deadline) {
      // Behind schedule, slots run back to back: clients are still served every 20 ms.
      if (now - lastPoll_ >= std::chrono::milliseconds(20)) {
        srv_.poll(server_, 0);
        lastPoll_ = now;
      }
      return;
    }
    if (deadline - now <= spin_) {  // the last stretch on the core: wake-up latency is not paid
      while (std::chrono::steady_clock::now() < deadline) {
      }
      continue;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0) {  // under a millisecond to go: never start a slot early
      std::this_thread::sleep_until(deadline - spin_);
      continue;
    }
    srv_.poll(server_, int(std::min<int64_t>(left.count(), 50)));
    lastPoll_ = std::chrono::steady_clock::now();
  }
}

// The newest record of every subscribed stream that wrote one.
void ClientWiring::publish(const std::vector<const std::string*>& wrote) {
  for (const std::string* idp : wrote) {
    const std::string& id = *idp;
    if (!srv_.subscribed(id)) continue;
    const uint8_t *data, *nl;
    const ir::Layout* layout;
    int64_t n = -1;
    if (!eng_.newest(id, data, nl, layout, &n)) continue;
    values_.clear();
    nulls_.clear();
    for (size_t e = 0; e < layout->elems.size(); ++e) {
      const ir::Element& el = layout->elems[e];
      values_.push_back(storage::elementText(el.type, data + el.offset, el.size));
      nulls_.push_back(nl[e] != 0);
    }
    auto& timing = timing_[id];  // interval and tail, asked once per stream
    if (!timing) timing = eng_.status(id);
    srv_.publish(id, values_, nulls_, n, timing ? slotTime(*timing, n) : "");
  }
}

}  // namespace tools
