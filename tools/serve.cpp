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
  return d;
}

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
  server_.remove = [this](const std::string& id) { return eng_.removeStream(id); };
  slots_.waitUntil = [this](std::chrono::steady_clock::time_point deadline) { waitUntil(deadline); };
  slots_.idle = [this] { srv_.poll(server_, 0); };
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
    if (!eng_.newest(id, data, nl, layout)) continue;
    values_.clear();
    nulls_.clear();
    for (size_t e = 0; e < layout->elems.size(); ++e) {
      const ir::Element& el = layout->elems[e];
      values_.push_back(storage::elementText(el.type, data + el.offset, el.size));
      nulls_.push_back(nl[e] != 0);
    }
    srv_.publish(id, values_, nulls_);
  }
}

}  // namespace tools
