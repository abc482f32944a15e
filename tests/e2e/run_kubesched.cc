#include "e2e/run_kubesched.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kubesched::e2e {
namespace {

// The environment may override the paths compiled in (e.g. to test an installed binary).
std::string Env(const char* name) {
  if (const char* v = std::getenv(name)) return v;
  if (std::string_view(name) == "KUBESCHED_SOURCE_DIR") return KUBESCHED_SOURCE_DIR;
  return KUBESCHED_BINARY_DIR;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace

std::string SourcePath(const std::string& relative) { return Env("KUBESCHED_SOURCE_DIR") + "/" + relative; }

std::string ReadSource(const std::string& relative) {
  std::ifstream in(SourcePath(relative));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WriteTempFile(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / ("kubesched-e2e-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string KubeschedPath() { return Env("KUBESCHED_BINARY_DIR") + "/kubesched"; }

RunResult RunKubesched(const std::vector<std::string>& args) { return RunKubeschedWithInput(args, ""); }

RunResult RunKubeschedWithInput(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::vector<std::string> argv{KubeschedPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, stdin_text);
}

RunResult RunCommand(const std::vector<std::string>& argv, const std::string& stdin_text) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + Quote(a);
  std::string in_file = WriteTempFile("stdin.txt", stdin_text);
  std::string out_file = WriteTempFile("stdout.txt", "");
  std::string err_file = WriteTempFile("stderr.txt", "");
  cmd += " <" + Quote(in_file) + " >" + Quote(out_file) + " 2>" + Quote(err_file);
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out_file);
  r.err = Slurp(err_file);
  return r;
}

std::string Gunzip(const std::string& path) {
  std::string out;
  FILE* p = popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (p == nullptr) return out;
  char buf[65536];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace kubesched::e2e
