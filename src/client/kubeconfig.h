#pragma once
// Where `kubesched run` finds its API server and credentials, as kube-scheduler does
// (clientcmd.BuildConfigFromFlags): a kubeconfig file, else the in-cluster service account, with
// --master overriding the server. KUBECONFIG is not read: kube-scheduler does not read it either.

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>

namespace kubesched::client {

//! Where Kubernetes mounts a pod's service account token and CA.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

struct TlsConfig {
  bool insecure = false;          //!< insecure-skip-tls-verify
  std::string ca_pem{};           //!< certificate-authority(-data), PEM; empty: the system's CAs
  std::string client_cert_pem{};  //!< client-certificate(-data)
  std::string client_key_pem{};   //!< client-key(-data)
  std::string server_name{};      //!< tls-server-name (SNI and hostname check); empty: the URL's host
};

struct RestConfig {
  //! "https://10.0.0.1:6443" or "http://127.0.0.1:8080"; a path prefix is allowed (https://h/k8s).
  std::string server{};
  TlsConfig tls{};
  std::string bearer_token{};  //!< token
  //! tokenFile: re-read when it changes (projected service account tokens rotate); when set it
  //! wins over bearer_token, as in client-go.
  std::string bearer_token_file{};
  std::string username{};  //!< basic auth, when given
  std::string password{};
  //! KubeSchedulerConfiguration clientConnection's defaults; qps <= 0: no limit.
  float qps = 50;
  int32_t burst = 100;
  std::string user_agent = "kubesched";
  //! Per-request timeout of requests other than watches; 0: 30 s.
  std::chrono::milliseconds timeout{0};
};

//! Loads a kubeconfig file (YAML or JSON) for `context` (empty: current-context). Relative paths
//! in it resolve against the file's directory and the files they name are read now; *-data
//! fields are base64. Errors name the file and the field: `kubeconfig /x/config:
//! contexts[0].context.cluster: cluster "foo" not found`. exec and auth-provider users are refused.
std::expected<RestConfig, std::string> LoadKubeconfig(const std::string& path, const std::string& context = "");

//! The pod's service account: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token
//! file (tokenFile, so rotations are picked up) and ca.crt under `sa_dir`. An error when the
//! variables are unset or the token cannot be read; an unreadable ca.crt leaves the system's CAs,
//! as client-go does.
std::expected<RestConfig, std::string> InClusterConfig(const std::string& sa_dir = kServiceAccountDir);

//! A bearer token file's token, without surrounding whitespace (as client-go reads it); the error
//! names the file.
std::expected<std::string, std::string> ReadTokenFile(const std::string& path);

//! kube-scheduler's choice: `kubeconfig_path` (the caller passes --kubeconfig, else
//! clientConnection.kubeconfig) when given; else `master` alone (no credentials) when given; else
//! the in-cluster config (from `sa_dir`); else an error. A non-empty `master` replaces the server
//! in every case.
std::expected<RestConfig, std::string> ResolveRestConfig(const std::string& kubeconfig_path, const std::string& master,
                                                         const std::string& sa_dir = kServiceAccountDir);

}  // namespace kubesched::client
