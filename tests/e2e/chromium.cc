#include "e2e/chromium.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kubesched::e2e {
namespace {

std::string Base64Decode(const std::string& in) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const size_t v = kAlphabet.find(c);
    if (v == std::string::npos) continue;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> FindChromium() {
  if (const char* env = std::getenv("KUBESCHED_CHROMIUM"); env != nullptr && *env != '\0') {
    if (access(env, X_OK) == 0) return std::string(env);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "headless_shell"}) {
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string candidate = dirs.substr(start, end - start) + "/" + name;
      if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
      start = end + 1;
    }
  }
  return std::nullopt;
}

std::expected<std::unique_ptr<Chromium>, std::string> Chromium::Launch(const std::string& binary) {
  std::unique_ptr<Chromium> c(new Chromium());
  char dir_template[] = "/tmp/kubesched-chromium-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return std::unexpected(std::string("mkdtemp: ") + std::strerror(errno));
  c->profile_dir_ = dir_template;
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
    return std::unexpected(std::string("pipe: ") + std::strerror(errno));
  }
  const std::string log = c->profile_dir_ + "/chromium.log";
  std::vector<std::string> args = {binary,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-dev-shm-usage",
                                   "--remote-debugging-pipe",
                                   "--user-data-dir=" + c->profile_dir_,
                                   "--no-first-run",
                                   "--no-default-browser-check",
                                   "--disable-extensions",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--disable-default-apps",
                                   "--mute-audio",
                                   "--hide-scrollbars",
                                   "--window-size=1400,1000",
                                   "about:blank"};
  const pid_t pid = fork();
  if (pid < 0) return std::unexpected(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // fds 3 and 4 as --remote-debugging-pipe wants them, whatever numbers pipe2 gave.
    const int in = fcntl(to[0], F_DUPFD, 10);
    const int out = fcntl(from[1], F_DUPFD, 10);
    dup2(in, 3);
    dup2(out, 4);
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    const int logfd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (logfd >= 0) {
      dup2(logfd, 1);
      dup2(logfd, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  c->pid_ = pid;
  c->to_browser_ = to[1];
  c->from_browser_ = from[0];

  auto target = c->Call("Target.createTarget", {{"url", "about:blank"}}, /*browser=*/true);
  if (!target) return std::unexpected("Target.createTarget: " + target.error() + " (log: " + log + ")");
  auto attached = c->Call("Target.attachToTarget", {{"targetId", (*target)["targetId"]}, {"flatten", true}},
                          /*browser=*/true);
  if (!attached) return std::unexpected("Target.attachToTarget: " + attached.error());
  c->session_ = (*attached)["sessionId"].get<std::string>();
  for (const char* domain : {"Runtime", "Log", "Network", "Page"}) {
    if (auto r = c->Call(std::string(domain) + ".enable"); !r) return std::unexpected(r.error());
  }
  return c;
}

Chromium::~Chromium() {
  if (pid_ > 0) {
    (void)Call("Browser.close", nlohmann::json::object(), /*browser=*/true);
    // Give it a few seconds to exit by itself, then end it.
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 50 && !exited; ++i) {
      exited = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  if (to_browser_ >= 0) close(to_browser_);
  if (from_browser_ >= 0) close(from_browser_);
  if (!profile_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(profile_dir_, ec);
  }
}

std::expected<void, std::string> Chromium::Send(const nlohmann::json& message) {
  std::string text = message.dump();
  text.push_back('\0');
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(to_browser_, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(std::string("write to chromium: ") + std::strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  return {};
}

std::expected<nlohmann::json, std::string> Chromium::Next(std::chrono::steady_clock::time_point deadline) {
  while (true) {
    const size_t end = buffer_.find('\0');
    if (end != std::string::npos) {
      nlohmann::json message = nlohmann::json::parse(buffer_.substr(0, end), nullptr, /*allow_exceptions=*/false);
      buffer_.erase(0, end + 1);
      if (message.is_discarded()) return std::unexpected(std::string("chromium sent a message that is not JSON"));
      return message;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::unexpected(std::string("timed out waiting for chromium"));
    pollfd p{from_browser_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = read(from_browser_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::unexpected(std::string("chromium closed the pipe (exited?)"));
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void Chromium::Keep(nlohmann::json message) {
  if (message.contains("id")) {
    responses_.push_back(std::move(message));
  } else if (message.value("sessionId", "") == session_ && !session_.empty()) {
    events_.push_back(std::move(message));
  }
}

std::expected<nlohmann::json, std::string> Chromium::Call(const std::string& method, nlohmann::json params,
                                                          bool browser) {
  const int id = next_id_++;
  nlohmann::json message = {{"id", id}, {"method", method}, {"params", std::move(params)}};
  if (!browser) message["sessionId"] = session_;
  if (auto sent = Send(message); !sent) return std::unexpected(sent.error());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    auto next = Next(deadline);
    if (!next) return std::unexpected(method + ": " + next.error());
    if (next->contains("id") && (*next)["id"] == id) {
      if (next->contains("error")) return std::unexpected(method + ": " + (*next)["error"].dump());
      return (*next)["result"];
    }
    Keep(std::move(*next));
  }
}

std::expected<nlohmann::json, std::string> Chromium::WaitEvent(const std::string& method, size_t after) {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  size_t seen = after;
  while (true) {
    for (; seen < events_.size(); ++seen) {
      if (events_[seen].value("method", "") == method) return events_[seen];
    }
    auto next = Next(deadline);
    if (!next) return std::unexpected("waiting for " + method + ": " + next.error());
    Keep(std::move(*next));
  }
}

std::expected<std::chrono::milliseconds, std::string> Chromium::Load(const std::string& url) {
  const size_t before = events_.size();
  const auto start = std::chrono::steady_clock::now();
  auto navigated = Call("Page.navigate", {{"url", url}});
  if (!navigated) return std::unexpected(navigated.error());
  if (navigated->contains("errorText")) return std::unexpected("Page.navigate: " + (*navigated)["errorText"].dump());
  auto loaded = WaitEvent("Page.loadEventFired", before);
  if (!loaded) return std::unexpected(loaded.error());
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

std::expected<nlohmann::json, std::string> Chromium::Evaluate(const std::string& expression) {
  auto r = Call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}});
  if (!r) return std::unexpected(r.error());
  if (r->contains("exceptionDetails")) return std::unexpected("evaluation failed: " + (*r)["exceptionDetails"].dump());
  return (*r)["result"].value("value", nlohmann::json());
}

std::expected<void, std::string> Chromium::Screenshot(const std::string& path, int width, int max_height) {
  auto height = Evaluate("document.documentElement.scrollHeight");
  if (!height) return std::unexpected(height.error());
  const int h = std::min(max_height, height->is_number() ? height->get<int>() : 1000);
  nlohmann::json params = {{"format", "png"},
                           {"captureBeyondViewport", true},
                           {"clip", {{"x", 0}, {"y", 0}, {"width", width}, {"height", h}, {"scale", 1}}}};
  auto shot = Call("Page.captureScreenshot", params);
  if (!shot) return std::unexpected(shot.error());
  std::ofstream out(path, std::ios::binary);
  out << Base64Decode((*shot)["data"].get<std::string>());
  if (!out) return std::unexpected("cannot write " + path);
  return {};
}

}  // namespace kubesched::e2e
