// Where an MQTT source reads and a PUBLISH sink writes:
// mqtt[s]://HOST:PORT[,HOST:PORT...]/TOPIC. Several hosts are tried in turn
// (failover). Credentials never appear here: they come from the TOML
// configuration, so a query text can be shown and logged freely.
#pragma once

#include <string>
#include <vector>

namespace ir {

struct MqttEndpoint {
  bool tls = false;
  std::vector<std::string> hosts;  // "host:port"
  std::string topic;
  // The broker addresses as the client library takes them ("tcp://h:p", "ssl://h:p").
  std::vector<std::string> serverUris() const;
};

// Parses `url` into `out`; an empty string, or what is wrong with it.
std::string parseMqttEndpoint(const std::string& url, MqttEndpoint& out);

}  // namespace ir
