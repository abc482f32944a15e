#pragma once
// Headless Chromium driven over the DevTools protocol, for end-to-end tests of the HTML report.
// Chromium runs with --remote-debugging-pipe: it reads commands from fd 3 and writes responses
// and events to fd 4, each message one JSON object ended by a NUL byte. One page is opened and
// attached with a flat session; every event is kept, so a test can check what the page logged
// and which requests it made.

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubesched::e2e {

//! The Chromium binary: $KUBESCHED_CHROMIUM, else chromium, chromium-browser, google-chrome or
//! headless_shell on the PATH; nullopt when there is none.
std::optional<std::string> FindChromium();

class Chromium {
 public:
  //! Starts `binary` headless with a fresh profile in a temporary directory and opens a page
  //! with the Runtime, Log, Network and Page domains enabled.
  static std::expected<std::unique_ptr<Chromium>, std::string> Launch(const std::string& binary);
  ~Chromium();
  Chromium(const Chromium&) = delete;
  Chromium& operator=(const Chromium&) = delete;

  //! Sends a command to the page's session (or to the browser when `browser` is true) and
  //! returns its result; an error response or a timeout is an error.
  std::expected<nlohmann::json, std::string> Call(const std::string& method,
                                                  nlohmann::json params = nlohmann::json::object(),
                                                  bool browser = false);
  //! Waits for the page's event `method` after `after` events were seen; returns it.
  std::expected<nlohmann::json, std::string> WaitEvent(const std::string& method, size_t after = 0);
  //! Every event of the page's session so far, in order.
  const std::vector<nlohmann::json>& events() const { return events_; }

  //! Navigates to `url` and waits for its load event; returns the time from the navigation to
  //! the load event.
  std::expected<std::chrono::milliseconds, std::string> Load(const std::string& url);
  //! Evaluates a JavaScript expression in the page and returns its value (returnByValue).
  std::expected<nlohmann::json, std::string> Evaluate(const std::string& expression);
  //! Captures the page (its full height, up to `max_height` CSS pixels) as PNG into `path`.
  std::expected<void, std::string> Screenshot(const std::string& path, int width, int max_height);

 private:
  Chromium() = default;
  std::expected<void, std::string> Send(const nlohmann::json& message);
  //! Reads the next message, waiting at most until the deadline.
  std::expected<nlohmann::json, std::string> Next(std::chrono::steady_clock::time_point deadline);
  void Keep(nlohmann::json message);

  pid_t pid_ = -1;
  int to_browser_ = -1;
  int from_browser_ = -1;
  std::string buffer_;
  std::string profile_dir_;
  std::string session_;
  int next_id_ = 1;
  std::vector<nlohmann::json> events_;
  std::vector<nlohmann::json> responses_;
  std::chrono::seconds timeout_{60};
};

}  // namespace kubesched::e2e
