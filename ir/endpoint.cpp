#include "ir/endpoint.hpp"

#include <cctype>

namespace ir {

std::vector<std::string> MqttEndpoint::serverUris() const {
  std::vector<std::string> out;
  for (auto& h : hosts) out.push_back((tls ? "ssl://" : "tcp://") + h);
  return out;
}

std::string parseMqttEndpoint(const std::string& url, MqttEndpoint& out) {
  out = {};
  std::string rest;
  if (url.rfind("mqtt://", 0) == 0) rest = url.substr(7);
  else if (url.rfind("mqtts://", 0) == 0) out.tls = true, rest = url.substr(8);
  else return "MQTT address '" + url + "' must start with mqtt:// or mqtts://";
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 >= rest.size())
    return "MQTT address '" + url + "' has no topic (mqtt://HOST:PORT/TOPIC)";
  const std::string authority = rest.substr(0, slash);
  out.topic = rest.substr(slash + 1);
  if (authority.find('@') != std::string::npos)
    return "MQTT address '" + url +
           "' carries credentials; put user and password in the [mqtt] table of the TOML "
           "configuration";
  if (out.topic.find_first_of("+#") != std::string::npos)
    return "MQTT topic '" + out.topic + "' has a wildcard; a stream reads or writes one topic";
  size_t b = 0;
  for (;;) {
    const size_t e = authority.find(',', b);
    const std::string host = authority.substr(b, e == std::string::npos ? std::string::npos : e - b);
    const size_t colon = host.rfind(':');
    if (host.empty() || colon == std::string::npos || colon == 0 || colon + 1 == host.size())
      return "MQTT address '" + url + "': '" + host + "' is not HOST:PORT";
    const std::string port = host.substr(colon + 1);
    for (char c : port)
      if (!isdigit((unsigned char)c)) return "MQTT address '" + url + "': port '" + port + "' is not a number";
    if (port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535)
      return "MQTT address '" + url + "': port " + port + " is out of range";
    out.hosts.push_back(host);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return {};
}

}  // namespace ir
