#include "connectors/mqtt_client.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace connectors {

namespace {
constexpr int kConnectTimeoutS = 5;  // TCP connect and the broker's CONNACK
int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void Client::scheduleRetry() {
  retryAtNs_ = nowNs() + int64_t(backoffMs_.load()) * 1000000;
  retry_.store(true, std::memory_order_release);
}

Client::Client(const ir::MqttEndpoint& ep, const MqttSettings& s, const std::string& clientId, OnMessage onMessage)
    : ep_(ep), settings_(s), clientId_(clientId), onMessage_(std::move(onMessage)) {
  uris_ = ep_.serverUris();
  for (auto& u : uris_) uriPtrs_.push_back(u.data());
  MQTTAsync_createOptions co = MQTTAsync_createOptions_initializer;
  co.sendWhileDisconnected = 0;  // the sink keeps its own bounded queue (it counts what it drops)
  if (MQTTAsync_createWithOptions(&handle_, uris_[0].c_str(), clientId_.c_str(), MQTTCLIENT_PERSISTENCE_NONE, nullptr,
                                  &co) != MQTTASYNC_SUCCESS)
    throw storage::SourceError("MQTT client for '" + ep_.topic + "' cannot be created");
  MQTTAsync_setCallbacks(handle_, this, &Client::onLost, &Client::onArrived, nullptr);
  MQTTAsync_setConnected(handle_, this, &Client::onConnected);
  connect();
}

Client::~Client() {
  if (!handle_) return;
  if (MQTTAsync_isConnected(handle_)) {
    MQTTAsync_disconnectOptions d = MQTTAsync_disconnectOptions_initializer;
    d.timeout = 500;
    MQTTAsync_disconnect(handle_, &d);
  }
  MQTTAsync_destroy(&handle_);
}

void Client::connect() {
  MQTTAsync_connectOptions o = MQTTAsync_connectOptions_initializer;
  o.keepAliveInterval = settings_.keepAliveS;
  o.cleansession = 0;
  o.automaticReconnect = 1;
  o.minRetryInterval = 1;
  o.maxRetryInterval = 2;  // a broker node that failed over comes back within seconds
  o.connectTimeout = kConnectTimeoutS;
  o.maxInflight = 1000;
  // Not the default (3.1.1, then 3.1 after a failure): a broker node that
  // refused one CONNECT while it failed over would get a 3.1 CONNECT next,
  // which NATS refuses, costing the reconnection another round.
  o.MQTTVersion = MQTTVERSION_3_1_1;
  o.serverURIs = uriPtrs_.data();
  o.serverURIcount = int(uriPtrs_.size());
  o.onFailure = &Client::onConnectFailure;
  o.context = this;
  if (!settings_.user.empty()) o.username = settings_.user.c_str();
  if (!settings_.password.empty()) o.password = settings_.password.c_str();
  MQTTAsync_SSLOptions ssl = MQTTAsync_SSLOptions_initializer;
  if (ep_.tls) {
    ssl.enableServerCertAuth = 1;
    ssl.verify = 1;
    if (!settings_.caFile.empty()) ssl.trustStore = settings_.caFile.c_str();
    o.ssl = &ssl;
  }
  connecting_ = true;
  if (MQTTAsync_connect(handle_, &o) != MQTTASYNC_SUCCESS) {
    connecting_ = false;
    scheduleRetry();
  }
}

void Client::tick() {
  if (!retry_.load(std::memory_order_acquire) || nowNs() < retryAtNs_.load()) return;
  retry_ = false;
  backoffMs_ = std::min(backoffMs_.load() * 2, 8000);
  connect();
}

bool Client::send(const std::string& payload) {
  if (!connected()) return false;
  MQTTAsync_message m = MQTTAsync_message_initializer;
  m.payload = const_cast<char*>(payload.data());
  m.payloadlen = int(payload.size());
  m.qos = 1;
  MQTTAsync_responseOptions r = MQTTAsync_responseOptions_initializer;
  r.onSuccess = &Client::onSent;
  r.onFailure = &Client::onSendFailure;
  r.context = this;
  inflight_.fetch_add(1, std::memory_order_relaxed);
  if (MQTTAsync_sendMessage(handle_, ep_.topic.c_str(), &m, &r) != MQTTASYNC_SUCCESS) {
    inflight_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

// ---- callbacks, on the client library's threads

void Client::onConnected(void* ctx, char*) {
  auto* c = static_cast<Client*>(ctx);
  c->connecting_ = false;
  c->everConnected_ = true;
  c->backoffMs_ = 250;
  if (c->lostLogged_.exchange(false)) fprintf(stderr, "MQTT %s: connected again\n", c->ep_.topic.c_str());
  if (c->onMessage_) {  // connected once the broker confirmed the subscription
    MQTTAsync_responseOptions r = MQTTAsync_responseOptions_initializer;
    r.onSuccess = [](void* ctx, MQTTAsync_successData*) {
      static_cast<Client*>(ctx)->connected_.store(true, std::memory_order_release);
    };
    r.context = c;
    MQTTAsync_subscribe(c->handle_, c->ep_.topic.c_str(), 1, &r);
    return;
  }
  c->connected_.store(true, std::memory_order_release);
}

void Client::onLost(void* ctx, char* cause) {
  auto* c = static_cast<Client*>(ctx);
  c->connected_.store(false, std::memory_order_release);
  if (!c->lostLogged_.exchange(true))
    fprintf(stderr, "warning: MQTT %s: connection lost (%s); reconnecting\n", c->ep_.topic.c_str(),
            cause ? cause : "broker gone");
}

// Always 1 (taken): the message is acknowledged whatever it held. Nothing
// thrown may cross the C library, and a payload that fails here would
// otherwise come again at every reconnection.
int Client::onArrived(void* ctx, char* topic, int, MQTTAsync_message* m) {
  auto* c = static_cast<Client*>(ctx);
  try {
    if (c->onMessage_) c->onMessage_(static_cast<const char*>(m->payload), size_t(std::max(0, m->payloadlen)));
  } catch (...) {
    fprintf(stderr, "warning: MQTT %s: a message could not be handled; dropped\n", c->ep_.topic.c_str());
  }
  MQTTAsync_freeMessage(&m);
  MQTTAsync_free(topic);
  return 1;
}

void Client::onConnectFailure(void* ctx, MQTTAsync_failureData* d) {
  auto* c = static_cast<Client*>(ctx);
  c->connecting_ = false;
  // Named with every address tried: a server that takes the TCP connection
  // and never answers MQTT shows here too, after the connect timeout.
  if (!c->lostLogged_.exchange(true)) {
    std::string at;
    for (auto& u : c->uris_) at += (at.empty() ? "" : ", ") + u;
    fprintf(stderr, "warning: MQTT %s: no broker answers at %s (%s, within %d s); trying again\n", c->ep_.topic.c_str(),
            at.c_str(), d && d->message ? d->message : "connect failed", kConnectTimeoutS);
  }
  c->scheduleRetry();
}

void Client::onSent(void* ctx, MQTTAsync_successData*) {
  auto* c = static_cast<Client*>(ctx);
  c->acked_.fetch_add(1, std::memory_order_relaxed);
  c->inflight_.fetch_sub(1, std::memory_order_relaxed);
}

void Client::onSendFailure(void* ctx, MQTTAsync_failureData*) {
  auto* c = static_cast<Client*>(ctx);
  c->failed_.fetch_add(1, std::memory_order_relaxed);
  c->inflight_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace connectors
