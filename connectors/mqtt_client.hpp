// One MQTT session on the Paho asynchronous client: connects in the
// background to the first broker of the list that answers, reconnects with
// backoff after a loss, and keeps its session on the broker (clean session
// off) so QoS 1 messages are not lost across a reconnection.
#pragma once

#include <MQTTAsync.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "connectors/mqtt.hpp"

namespace connectors {

class Client {
 public:
  using OnMessage = std::function<void(const char* data, size_t size)>;
  // With `onMessage` the client subscribes to the topic (QoS 1) at each connection.
  Client(const ir::MqttEndpoint& ep, const MqttSettings& s, const std::string& clientId, OnMessage onMessage = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // On the engine's thread: a first connection that failed is tried again
  // once its backoff has passed (later losses reconnect on their own).
  void tick();
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  bool connecting() const { return connecting_.load(std::memory_order_acquire); }  // the first attempt, still open
  bool everConnected() const { return everConnected_.load(std::memory_order_acquire); }
  // Sends one QoS 1 message. False when it cannot go now (not connected, or
  // too many unacknowledged): keep it and try again later.
  bool send(const std::string& payload);
  uint64_t acked() const { return acked_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  int inflight() const { return inflight_.load(std::memory_order_relaxed); }
  const std::string& topic() const { return ep_.topic; }

 private:
  void connect();
  void scheduleRetry();
  static void onConnected(void* ctx, char* cause);
  static void onLost(void* ctx, char* cause);
  static int onArrived(void* ctx, char* topic, int topicLen, MQTTAsync_message* m);
  static void onConnectFailure(void* ctx, MQTTAsync_failureData* d);
  static void onSent(void* ctx, MQTTAsync_successData* d);
  static void onSendFailure(void* ctx, MQTTAsync_failureData* d);

  ir::MqttEndpoint ep_;
  MqttSettings settings_;
  std::string clientId_;
  OnMessage onMessage_;
  MQTTAsync handle_ = nullptr;
  std::vector<std::string> uris_;
  std::vector<char*> uriPtrs_;
  std::atomic<bool> connected_{false};
  std::atomic<bool> connecting_{false};
  std::atomic<bool> everConnected_{false};
  std::atomic<uint64_t> acked_{0}, failed_{0};
  std::atomic<int> inflight_{0};
  // Written by the library's threads, read on the engine's.
  std::atomic<int64_t> retryAtNs_{0};
  std::atomic<int> backoffMs_{250};
  std::atomic<bool> retry_{false};
  std::atomic<bool> lostLogged_{false};
};

}  // namespace connectors
