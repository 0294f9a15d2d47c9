// MQTT connectors: a declared stream that reads a topic (DECLARE ... MQTT
// 'mqtt://host:port/topic') and a stream whose records are also published
// to a topic (SELECT ... PUBLISH 'mqtt://...'), on the Eclipse Paho MQTT C
// client (asynchronous: its own threads talk to the broker; the slot thread
// never blocks on the network).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ir/endpoint.hpp"
#include "ir/ir.hpp"
#include "ir/layout.hpp"
#include "storage/source.hpp"

namespace connectors {

// Records published with their index ("n") by other engines are placed by
// that index: record n goes to this engine's record n + offset. The offset is
// one per engine and interval, set by the first such record any source of
// that interval receives, so records of edges that started together pair up
// by index (e1 + e2 joins record n of both).
struct IndexAlignment {
  std::mutex mu;
  std::map<std::string, int64_t> offset;  // by interval ("p/q")
};

// The [mqtt] table of the TOML configuration.
struct MqttSettings {
  std::string user, password;     // never in the query text
  std::string caFile;             // mqtts://: the CA certificates to trust (empty: the system's)
  int64_t bufferRecords = 10000;  // PUBLISH: records kept while the broker is away; then the oldest go
  std::string clientId;           // sessions are named <clientId>-<stream>-{src,pub}
  int keepAliveS = 5;
  int drainMs = 5000;              // at the end of a run, how long a sink may take to hand over what it still holds
  bool waitWhenFull = false;       // offline runs (--no-clock): a full buffer waits for the broker (MqttSink::relieve)
  std::function<bool()> stopping;  // the engine is stopping: no sink waits for a broker any more
  std::shared_ptr<IndexAlignment> alignment;  // the engine's (made by the first source when unset)
  // Sources: a longer or deeper payload is malformed, found before any parse (a record is small and flat).
  int64_t maxPayloadBytes = 1 << 20;
  int maxJsonDepth = 32;
};

// Empty when a payload may be decoded, else why not: longer than
// `maxBytes`, or JSON nested deeper than `maxDepth` (one scan, no recursion:
// a payload nested 100,000 deep must not reach a recursive walk).
std::string checkPayload(std::string_view payload, int64_t maxBytes, int maxDepth);

// Record payloads (checkPayload first). A JSON object with the declared
// field names (a missing or null field is NULL; an array field takes a JSON
// array; a FLOAT or DOUBLE also takes "NaN", "Infinity" or "-Infinity", as
// encodeRecord writes them), or the values as text separated by blanks or commas (an empty
// value between commas is NULL), in
// declaration order. `index` gets the object's "n" (a record this engine
// published), else -1. False (and `why`) for a payload that is neither.
bool decodePayload(const std::string& payload, const std::vector<ir::Field>& schema, const ir::Layout& layout,
                   uint8_t* rec, uint8_t* nulls, int64_t& index, std::string& why);

// {"stream": ..., "n": ..., "t": seconds, "t_exact": "p/q", field: value, ...}:
// NULL as null, RATIONAL as a number plus "<field>_exact": "p/q", a STRING as
// storage::jsonText (invalid UTF-8 as U+FFFD), a FLOAT or DOUBLE NaN or
// infinity as the string storage::nonFiniteName gives. Never throws on a
// record's bytes (fuzz/fuzz_json.cpp).
std::string encodeRecord(const std::string& stream, int64_t n, const std::string& tExact,
                         const std::vector<ir::Field>& schema, const ir::Layout& layout, const uint8_t* rec,
                         const uint8_t* nulls);

// A declared stream on a topic. Each slot takes the newest record that came
// since the previous slot; records this engine published (with "n") are
// taken in index order instead, each once (duplicates after a broker
// failover are dropped). No record by the deadline: all NULL, a miss.
std::unique_ptr<storage::Source> openMqttSource(const ir::Query& q, const ir::Layout& layout, const MqttSettings& s);

// What a PUBLISH sink has done.
struct SinkCounters {
  uint64_t published = 0;  // acknowledged by the broker (QoS 1)
  uint64_t dropped = 0;    // the oldest records let go while the broker was away
  uint64_t queued = 0;     // waiting to be sent now
};

class MqttSink {
 public:
  MqttSink(const ir::Query& q, const ir::Layout& layout, const MqttSettings& s);
  ~MqttSink();
  MqttSink(const MqttSink&) = delete;
  MqttSink& operator=(const MqttSink&) = delete;
  // Record n of the stream, written in slot time `tExact` ("p/q" seconds).
  void publish(int64_t n, const std::string& tExact, const uint8_t* rec, const uint8_t* nulls);
  SinkCounters counters() const;
  // Offline runs, between blocks: waits up to `ms` for the broker to take
  // the records over the buffer. True once the sink no longer holds the run:
  // within its buffer, the engine stopping, or 30 s without the broker
  // taking a record (then the oldest go, as in a clocked run, until it is back).
  bool relieve(int ms);
  // At the end of a run: waits up to `ms` for the records still queued or
  // unacknowledged, also while the client moves to another broker (not after
  // a stop request, nor when no broker was ever reached); logs what was not delivered.
  void drain(int ms);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Counters of an MQTT source beyond reads and misses (xqry -t).
struct SourceCounters {
  uint64_t received = 0;   // messages that arrived
  uint64_t malformed = 0;  // payloads that were not a record
  uint64_t dropped = 0;    // records never taken: a newer one came first, a duplicate, or too late
  bool connected = false;
};
// The counters of a source opened by openMqttSource (nothing for another source).
bool mqttSourceCounters(const storage::Source& s, SourceCounters& out);

}  // namespace connectors
