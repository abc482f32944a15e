#include "cmd/apiserver.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cmd/cli.h"
#include "cmd/serving.h"
#include "server/api_handler.h"
#include "server/http_server.h"
#include "server/kubeconfig.h"
#include "server/manifest_objects.h"
#include "server/ui_handler.h"
#include "store/controllers/controller.h"
#include "store/controllers/realtime_runner.h"
#include "store/resources.h"
#include "util/clock.h"
#include "util/log.h"

namespace kubesched::cmd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;

// The resource serving objects of `api_version` and `kind`, or null.
const store::ResourceType* ResourceOf(const store::Store& store, std::string_view api_version, std::string_view kind) {
  // Served resources: custom resources too, once the manifests' CRDs before them are created.
  for (const store::ResourceType* t : store.ServedResources()) {
    if (t->GroupVersion() == api_version && t->kind == kind) return t;
  }
  return nullptr;
}

// Creates the manifests' objects: namespaces first, then the rest in manifest order, each
// namespace an object uses created when missing (as the loader treats undeclared namespaces).
// Objects already there (from --state) are kept.
std::expected<void, std::string> CreateManifestObjects(store::Store& store, server::ManifestObjects& manifests) {
  for (const std::string& w : manifests.warnings) std::cerr << "warning: " << w << "\n";
  const store::ResourceType* namespaces = store.FindResource("", "namespaces");
  auto ensure_namespace = [&](std::string_view ns) -> std::expected<void, std::string> {
    if (namespaces == nullptr || ns.empty() || store.Get(*namespaces, "", ns)) return {};
    api::json::Document doc;
    std::string text = fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})", ns);
    if (!api::json::Parse(text, doc)) return std::unexpected(fmt::format("invalid namespace name \"{}\"", ns));
    auto created = store.Create(*namespaces, "", std::move(doc));
    if (!created && created.error().reason != store::Error::Reason::kAlreadyExists) {
      return std::unexpected(fmt::format("creating namespace {}: {}", ns, created.error().message));
    }
    return {};
  };
  std::stable_partition(manifests.objects.begin(), manifests.objects.end(),
                        [](const server::ManifestObject& o) { return o.kind == "Namespace" && o.api_version == "v1"; });
  for (server::ManifestObject& o : manifests.objects) {
    const store::ResourceType* type = ResourceOf(store, o.api_version, o.kind);
    if (type == nullptr) {
      std::cerr << fmt::format("warning: {}: {} {} is not served by kubesched apiserver; skipped\n", o.source,
                               o.api_version, o.kind);
      continue;
    }
    std::string ns;
    if (type->namespaced) {
      const api::json::Value* meta = api::json::Find(*o.json, "metadata");
      ns = meta != nullptr ? std::string(api::json::GetString(*meta, "namespace")) : "";
      if (ns.empty()) ns = "default";
      if (auto ok = ensure_namespace(ns); !ok) return std::unexpected(fmt::format("{}: {}", o.source, ok.error()));
    }
    auto created = store.Create(*type, ns, std::move(*o.json));
    if (!created) {
      if (created.error().reason == store::Error::Reason::kAlreadyExists) {
        std::cerr << fmt::format("warning: {}: {} (kept)\n", o.source, created.error().message);
        continue;
      }
      return std::unexpected(fmt::format("{}: {}", o.source, created.error().message));
    }
  }
  return {};
}

}  // namespace

CLI::App* AddApiserverSubcommand(CLI::App& app, ApiserverFlags& args) {
  CLI::App* cmd = app.add_subcommand(
      "apiserver",
      "serve the simulated cluster over the Kubernetes REST API for kubectl (a test bed on loopback, not a "
      "production API server: no authentication, no server-side apply)");
  cmd->add_option("--listen", args.listen, "host:port to listen on; port 0 picks a free port (printed on stdout)")
      ->capture_default_str();
  cmd->add_option("--write-kubeconfig", args.kubeconfig,
                  "write a kubeconfig (cluster, user, context, current-context) pointing at the server to this file");
  cmd->add_option("-f,--filename", args.files,
                  "manifests whose objects exist from the start: files, directories or - for standard input");
  cmd->add_flag("--tls", args.tls,
                "serve HTTPS with a self-signed certificate made at start (its CA in the kubeconfig)");
  cmd->add_option("--state", args.state,
                  "keep the objects in this file: loaded at start (with the journal of writes after it, FILE.journal), "
                  "every write on disk before it is acknowledged, a snapshot on shutdown");
  cmd->add_option("--token-auth-file", args.token_auth_file,
                  "tokens the TokenReview API accepts (kube-apiserver's CSV: token,user,uid,\"group1,group2\"), for "
                  "components that delegate authentication to the test bed")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", args.threads,
                  "threads that serve requests (connections, open watches and slow clients hold none)")
      ->check(IntegerInRange(1, 1024, "an integer from 1 to 1024"))
      ->capture_default_str();
  cmd->add_flag("--ui", args.ui,
                "serve a live web UI at /ui/ on the same port (nodes, pods, events, per-plugin results, pasted "
                "manifests created or deleted); no authentication: keep --listen on loopback");
  return cmd;
}

int ApiserverCommand(const ApiserverFlags& args) {
  auto listen = SplitListen(args.listen);
  if (!listen) {
    std::cerr << "error: " << listen.error() << "\n";
    return kExitUsage;
  }

  // Before any thread starts (see SignalWatcher).
  SignalWatcher signals;

  server::ApiHandlerOptions handler_options;
  if (!args.token_auth_file.empty()) {
    auto tokens = server::LoadTokenFile(args.token_auth_file);
    if (!tokens) {
      std::cerr << "error: --token-auth-file: " << tokens.error() << "\n";
      return kExitUsage;
    }
    handler_options.tokens = std::move(*tokens);
  }

  static const util::SystemClock clock;
  std::unique_ptr<store::Store> store = store::NewBuiltinStore(clock);
  if (!args.state.empty()) {
    // What a previous run kept (its last snapshot and the journal after it), then every write
    // on disk before it is acknowledged.
    if (auto loaded = store->OpenState(args.state); !loaded) {
      std::cerr << "error: --state " << args.state << ": " << loaded.error().message << "\n";
      return kExitFailure;
    }
  }
  if (!args.files.empty()) {
    auto manifests = server::ManifestObjectsJson(args.files);
    if (!manifests) {
      std::cerr << "error: " << manifests.error() << "\n";
      return kExitUsage;
    }
    {
      // No client waits on these: one disk sync for all of them, not one each.
      store::UnsyncedWrites unsynced;
      if (auto created = CreateManifestObjects(*store, *manifests); !created) {
        std::cerr << "error: " << created.error() << "\n";
        return kExitUsage;
      }
    }
    if (auto synced = store->Sync(); !synced) {
      std::cerr << "error: --state " << args.state << ": " << synced.error().message << "\n";
      return kExitFailure;
    }
  }

  // The controllers (ReplicaSet, Deployment, disruption, node lifecycle) on wall-clock time,
  // from the objects loaded so far.
  std::unique_ptr<store::controllers::ControllerManager> controllers =
      store::controllers::NewDefaultControllerManager(*store, clock);
  controllers->Start();
  store::controllers::RealTimeRunner runner(*controllers);
  runner.Start();

  server::HttpServerOptions http;
  http.host = listen->first;
  http.port = listen->second;
  http.threads = static_cast<size_t>(args.threads);
  if (args.tls) {
    auto identity = server::GenerateSelfSignedIdentity();
    if (!identity) {
      std::cerr << "error: --tls: " << identity.error() << "\n";
      return kExitFailure;
    }
    http.tls = std::make_shared<const server::TlsIdentity>(std::move(*identity));
  }
  server::ApiHandler handler(*store, std::move(handler_options));
  // --ui: the page and its manifest endpoints in front of the API (server/ui_handler.h).
  server::UiHandler ui(handler, *store);
  server::Handler& front = args.ui ? static_cast<server::Handler&>(ui) : handler;
  auto bound = server::HttpServer::Bind(front, http);
  if (!bound) {
    std::cerr << "error: " << bound.error() << "\n";
    return kExitFailure;
  }
  server::HttpServer& srv = **bound;
  // Discovery names the address clients reach: known only now with port 0.
  handler.SetServerAddress(fmt::format("{}:{}", http.host, srv.Port()));

  if (!args.kubeconfig.empty()) {
    server::KubeconfigOptions kc;
    kc.server = srv.Url();
    if (http.tls) kc.ca_pem = http.tls->certificate_pem;
    if (auto written = server::WriteKubeconfig(args.kubeconfig, kc); !written) {
      std::cerr << "error: --write-kubeconfig: " << written.error() << "\n";
      return kExitFailure;
    }
  }

  std::stop_callback shutdown(signals.token(), [&srv] { srv.Shutdown(); });

  std::cout << "listening on " << srv.Url() << std::endl;
  if (args.ui) std::cerr << "web UI (no authentication) at " << srv.Url() << "/ui/\n";
  const bool served = srv.Run();
  runner.Stop();
  int code = served ? kExitOk : kExitFailure;
  if (!served) std::cerr << "error: the server stopped unexpectedly\n";
  if (!args.state.empty()) {
    if (auto saved = store->CloseState(); !saved) {
      std::cerr << "error: --state " << args.state << ": " << saved.error().message << "\n";
      code = kExitFailure;
    }
  }
  return code;
}

}  // namespace kubesched::cmd
