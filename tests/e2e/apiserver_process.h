#pragma once
// Processes for the end-to-end tests that need a cluster: `kubesched apiserver` started on a free
// loopback port with the kubeconfig it writes, kubectl pointed at it, and other children (a
// watch, `kubesched run`) whose output the test reads.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {

namespace fs = std::filesystem;

inline std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline bool HaveKubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

// A started process whose stdout is a pipe the test reads.
struct Child {
  pid_t pid = -1;
  int out_fd = -1;
};

inline Child Spawn(const std::vector<std::string>& argv, const fs::path& stderr_path, const std::string& home) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("HOME", home.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Reads what the child writes until `done` says enough, or `timeout` passes.
inline std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& done,
                             std::chrono::milliseconds timeout) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(text)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

inline int StopChild(Child& c, int sig) {
  if (c.pid <= 0) return -1;
  kill(c.pid, sig);
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (c.out_fd >= 0) close(c.out_fd);
  c = {};
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// One `kubesched apiserver` for a test, and kubectl pointed at it.
class ApiServer {
 public:
  //! `listen`: host:port (port 0: a free one, printed by the server and read here).
  explicit ApiServer(std::vector<std::string> extra = {}, fs::path dir = {}, std::string listen = "127.0.0.1:0") {
    static int counter = 0;  // per test binary
    dir_ = dir.empty() ? fs::temp_directory_path() /
                             ("kubesched-apiserver-e2e-" + std::to_string(getpid()) + "-" + std::to_string(counter++))
                       : dir;
    fs::create_directories(dir_);
    kubeconfig_ = (dir_ / "kubeconfig").string();
    std::vector<std::string> argv = {KubeschedPath(), "apiserver",          "--listen",
                                     listen,          "--write-kubeconfig", kubeconfig_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    server_ = Spawn(argv, dir_ / "server.err", dir_.string());
    std::string line = ReadUntil(
        server_.out_fd, [](const std::string& t) { return t.find('\n') != std::string::npos; },
        std::chrono::seconds(30));
    const std::string prefix = "listening on ";
    if (line.starts_with(prefix)) url_ = line.substr(prefix.size(), line.find('\n') - prefix.size());
  }
  ~ApiServer() {
    for (Child& w : watchers_) StopChild(w, SIGTERM);
    if (server_.pid > 0) StopChild(server_, SIGKILL);
  }

  const std::string& Url() const { return url_; }
  const std::string& Kubeconfig() const { return kubeconfig_; }
  const fs::path& Dir() const { return dir_; }
  std::string ServerLog() const { return Slurp(dir_ / "server.err"); }

  //! `kubectl --kubeconfig FILE args...` with `input` on stdin.
  RunResult Kubectl(const std::vector<std::string>& args, const std::string& input = "") {
    const fs::path in = dir_ / "kubectl.in";
    std::ofstream(in) << input;
    std::string cmd = "HOME=" + Quote(dir_.string()) + " kubectl --kubeconfig " + Quote(kubeconfig_);
    for (const std::string& a : args) cmd += " " + Quote(a);
    cmd += " <" + Quote(in.string()) + " >" + Quote((dir_ / "kubectl.out").string()) + " 2>" +
           Quote((dir_ / "kubectl.err").string());
    int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(dir_ / "kubectl.out");
    r.err = Slurp(dir_ / "kubectl.err");
    return r;
  }

  //! Starts `kubectl args...` in the background (a watch); its output is read with WatchOutput.
  size_t StartKubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"kubectl", "--kubeconfig", kubeconfig_};
    argv.insert(argv.end(), args.begin(), args.end());
    watchers_.push_back(Spawn(argv, dir_ / ("watch" + std::to_string(watchers_.size()) + ".err"), dir_.string()));
    return watchers_.size() - 1;
  }
  std::string WatchOutputUntil(size_t i, const std::string& needle, std::chrono::milliseconds timeout) {
    watch_text_ += ReadUntil(
        watchers_[i].out_fd, [&](const std::string& t) { return (watch_text_ + t).find(needle) != std::string::npos; },
        timeout);
    return watch_text_;
  }

  //! SIGTERM; the exit code.
  int Terminate() { return StopChild(server_, SIGTERM); }
  //! SIGKILL: a crash.
  void Kill() { StopChild(server_, SIGKILL); }

  //! Binds a pod as a scheduler would (pods/binding).
  RunResult Bind(const std::string& pod, const std::string& node) {
    const fs::path body = dir_ / ("binding-" + pod + ".json");
    std::ofstream(body) << R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" << pod
                        << R"("},"target":{"kind":"Node","name":")" << node << R"("}})";
    return Kubectl({"create", "--raw", "/api/v1/namespaces/default/pods/" + pod + "/binding", "-f", body.string()});
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path dir_;
  std::string kubeconfig_;
  Child server_;
  std::string url_;
  std::vector<Child> watchers_;
  std::string watch_text_;
};

}  // namespace kubesched::e2e
