// xretractor --http HOST:PORT: a small page that lists the streams and plots
// the chosen ones live. It is an xqry-like client of the engine's own socket
// (the list is `get`, each plot a `show` subscription), served by
// cpp-httplib on threads of its own; records reach the browser as
// Server-Sent Events, at most http.max_clients streams at once (a 503 beyond).
// Nothing here touches the engine's thread.
#pragma once

#include <memory>
#include <string>

namespace tools {

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
