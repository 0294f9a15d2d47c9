// xretractor --http HOST:PORT: a small page that lists the streams and plots
// the chosen ones live. It is an xqry-like client of the engine's own socket
// (the list is `get`, each plot a `show` subscription), served by
// cpp-httplib on threads of its own; records reach the browser as
// Server-Sent Events, at most http.max_clients streams at once (a 503 beyond).
// Nothing here touches the engine's thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tools {

// One record of a subscription as the data of an /events message:
// {"values": [...], "text": [...], "n": N, "t": seconds}. `text` is each value
// as the engine wrote it (a STRING as storage::jsonText: invalid UTF-8 as
// U+FFFD), `values` the same as numbers to plot (null for a STRING, a pair,
// NaN or an infinity); a NULL is null in both. `n`, `t` ("p/q"): left out when
// empty. Never throws on any bytes of a value (fuzz/fuzz_json.cpp).
std::string liveEventJson(const std::vector<std::string>& text, const std::vector<bool>& nulls, const std::string& n,
                          const std::string& t);

class LivePage {
 public:
  // Serves `webDir` (index.html, uplot/) and the data of the engine at
  // `socketPath`. Throws std::runtime_error when it cannot listen.
  LivePage(const std::string& hostPort, const std::string& socketPath, const std::string& webDir);
  ~LivePage();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tools
