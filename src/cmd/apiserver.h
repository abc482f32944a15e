#pragma once
// `kubesched apiserver`: the simulated cluster's object store served over the Kubernetes REST
// API on loopback, for kubectl and other clients. A test bed, not a production API server: its API
// is open (it answers TokenReviews and SubjectAccessReviews for components that delegate to it,
// but checks no request of its own), no admission webhooks, no server-side apply, no etcd.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

struct ApiserverFlags {
  std::string listen = "127.0.0.1:8080";  //!< host:port; port 0 picks a free one
  std::string kubeconfig;                 //!< --write-kubeconfig: where to write one, or ""
  std::vector<std::string> files;         //!< -f: manifests whose objects exist from the start
  bool tls = false;                       //!< HTTPS with a self-signed certificate
  std::string state;                      //!< --state: kept there (snapshot and journal)
  std::string token_auth_file;            //!< --token-auth-file: the tokens TokenReview accepts
  int threads = 8;                        //!< threads that serve requests (watches hold none)
  bool ui = false;                        //!< --ui: the web UI under /ui/ (server/ui_handler.h)
};

//! Registers the `apiserver` subcommand on `app`, filling `args` when parsed.
CLI::App* AddApiserverSubcommand(CLI::App& app, ApiserverFlags& args);

//! Serves until SIGTERM or SIGINT; returns the process exit code (0 after a clean shutdown,
//! 1 when the server cannot start or the state cannot be saved, 2 for bad input).
int ApiserverCommand(const ApiserverFlags& args);

}  // namespace kubesched::cmd
