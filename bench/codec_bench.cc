// Benchmarks of the object codec (README "Codec"): parse-only throughput of the JSON and YAML
// libraries kubesched could build on, for a typical Pod (~1.4 KB) and Node (~2 KB), then
// kubesched's own decode (bytes → DOM → typed object) and encode (typed object → JSON).
//   cmake --build <dir> --target kubesched_codec_bench && <dir>/bench/kubesched_codec_bench
// items_per_second is objects per second.

#include <libfyaml.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#ifdef KUBESCHED_BENCH_SIMDJSON
#include <simdjson.h>
#endif

#include "api/decode.h"
#include "api/encode.h"
#include "api/json.h"
#include "api/yaml.h"
#include "codec_samples.h"

namespace kubesched::bench {
namespace {

std::string_view Sample(int64_t which) { return which == 0 ? kTypicalPodJson : kTypicalNodeJson; }

std::string Compact(std::string_view text) {
  api::json::Document doc;
  if (!api::json::Parse(text, doc)) throw std::runtime_error("bad sample");
  return api::json::Encode(doc);
}

// The sample in block-style YAML, as people write manifests.
std::string AsYaml(std::string_view json) {
  const std::string compact = Compact(json);
  fy_document* doc = fy_document_build_from_string(nullptr, compact.data(), compact.size());
  if (doc == nullptr) throw std::runtime_error("libfyaml cannot read the sample");
  char* text = fy_emit_document_to_string(doc, FYECF_MODE_BLOCK);
  std::string out(text);
  std::free(text);
  fy_document_destroy(doc);
  return out;
}

void SetCounters(benchmark::State& state, size_t bytes) {
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetLabel(state.range(0) == 0 ? "pod" : "node");
}

void BM_ParseRapidJson(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  for (auto _ : state) {
    api::json::Document doc;
    if (!api::json::Parse(text, doc)) state.SkipWithError("parse");
    benchmark::DoNotOptimize(doc.MemberCount());
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_ParseRapidJson)->Arg(0)->Arg(1);

#ifdef KUBESCHED_BENCH_SIMDJSON
void BM_ParseSimdjsonDom(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  simdjson::dom::parser parser;  // reused, as simdjson intends
  const simdjson::padded_string padded(text);
  for (auto _ : state) {
    simdjson::dom::element doc;
    if (parser.parse(padded).get(doc)) state.SkipWithError("parse");
    benchmark::DoNotOptimize(doc);
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_ParseSimdjsonDom)->Arg(0)->Arg(1);
#endif

void BM_ParseNlohmann(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  for (auto _ : state) {
    auto doc = nlohmann::json::parse(text);
    benchmark::DoNotOptimize(doc.size());
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_ParseNlohmann)->Arg(0)->Arg(1);

void BM_ParseYamlCpp(benchmark::State& state) {
  const std::string text = AsYaml(Sample(state.range(0)));
  for (auto _ : state) {
    YAML::Node doc = YAML::Load(text);
    benchmark::DoNotOptimize(doc.size());
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_ParseYamlCpp)->Arg(0)->Arg(1);

void BM_ParseLibfyaml(benchmark::State& state) {
  const std::string text = AsYaml(Sample(state.range(0)));
  fy_parse_cfg cfg{};
  cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_ALLOW_DUPLICATE_KEYS);
  for (auto _ : state) {
    fy_document* doc = fy_document_build_from_string(&cfg, text.data(), text.size());
    if (doc == nullptr) state.SkipWithError("parse");
    benchmark::DoNotOptimize(doc);
    fy_document_destroy(doc);
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_ParseLibfyaml)->Arg(0)->Arg(1);

// YAML text to the JSON DOM the decoders read (libfyaml plus the scalar resolution).
void BM_YamlToDom(benchmark::State& state) {
  const std::string text = AsYaml(Sample(state.range(0)));
  for (auto _ : state) {
    api::json::Document doc;
    auto r = api::yaml::Parse(text, doc);
    if (!r) state.SkipWithError("parse");
    benchmark::DoNotOptimize(doc.MemberCount());
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_YamlToDom)->Arg(0)->Arg(1);

// Bytes to a typed object: parse, schema-free decode, and the object's compact JSON kept.
void BM_DecodeJson(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  for (auto _ : state) {
    api::json::Document doc;
    if (!api::json::Parse(text, doc)) state.SkipWithError("parse");
    if (state.range(0) == 0) {
      auto pod = api::DecodePod(doc);
      if (!pod) state.SkipWithError("decode");
      benchmark::DoNotOptimize(pod);
    } else {
      auto node = api::DecodeNode(doc);
      if (!node) state.SkipWithError("decode");
      benchmark::DoNotOptimize(node);
    }
  }
  SetCounters(state, text.size());
}
BENCHMARK(BM_DecodeJson)->Arg(0)->Arg(1);

// A typed object (no kept JSON) to compact JSON: the modelled fields only.
void BM_EncodeTyped(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  api::json::Document doc;
  (void)api::json::Parse(text, doc);
  const bool is_pod = state.range(0) == 0;
  std::shared_ptr<api::Pod> pod;
  std::shared_ptr<api::Node> node;
  if (is_pod) {
    pod = *api::DecodePod(doc);
  } else {
    node = *api::DecodeNode(doc);
  }
  size_t bytes = 0;
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (is_pod) {
      api::EncodePodTo(*pod, out);
    } else {
      api::EncodeNodeTo(*node, out);
    }
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state, bytes);
}
BENCHMARK(BM_EncodeTyped)->Arg(0)->Arg(1);

// The full object (every field, as kept from the manifest) back to compact JSON.
void BM_EncodeDom(benchmark::State& state) {
  const std::string text = Compact(Sample(state.range(0)));
  api::json::Document doc;
  (void)api::json::Parse(text, doc);
  std::string out;
  for (auto _ : state) {
    out.clear();
    api::json::EncodeTo(doc, out);
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state, out.size());
}
BENCHMARK(BM_EncodeDom)->Arg(0)->Arg(1);

// The counted loop (its own function, so callgrind's --toggle-collect can name it).
template <typename F>
[[gnu::noinline]] void CountLoopBody(const F& run, int n) {
  for (int i = 0; i < n; ++i) run();
}

// For instruction counts (repeatable on a shared machine, unlike times):
//   valgrind --tool=callgrind --toggle-collect='*CountLoopBody*' <dir>/bench/kubesched_codec_bench
//   --count=decode-pod:1000
// runs one operation (parse-pod, decode-pod, decode-node, typed-pod, typed-node, encode-pod, encode-node,
// encode-dom-pod) n times; Collected / n is the instructions per object. typed- is decode- without the
// parse and the kept JSON: the typed decoding alone.
[[gnu::noinline]] void CountLoop(std::string_view op, int n) {
  const bool pod = op.ends_with("-pod");
  const std::string text = Compact(pod ? kTypicalPodJson : kTypicalNodeJson);
  api::json::Document fixed;
  (void)api::json::Parse(text, fixed);
  std::shared_ptr<api::Pod> typed_pod;
  std::shared_ptr<api::Node> typed_node;
  if (pod) typed_pod = *api::DecodePod(fixed);
  if (!pod) typed_node = *api::DecodeNode(fixed);
  std::string out;
  const auto run = [&] {
    if (op.starts_with("parse-")) {
      api::json::Document doc;
      if (!api::json::Parse(text, doc)) throw std::runtime_error("parse");
      benchmark::DoNotOptimize(doc.MemberCount());
    } else if (op.starts_with("decode-")) {
      api::json::Document doc;
      if (!api::json::Parse(text, doc)) throw std::runtime_error("parse");
      if (pod) {
        auto p = api::DecodePod(doc);
        if (!p) throw std::runtime_error("decode");
        benchmark::DoNotOptimize(p);
      } else {
        auto nd = api::DecodeNode(doc);
        if (!nd) throw std::runtime_error("decode");
        benchmark::DoNotOptimize(nd);
      }
    } else if (op.starts_with("typed-")) {
      const api::DecodeOptions options{.keep_json = false};
      if (pod) {
        auto p = api::DecodePod(fixed, options);
        if (!p) throw std::runtime_error("decode");
        benchmark::DoNotOptimize(p);
      } else {
        auto nd = api::DecodeNode(fixed, options);
        if (!nd) throw std::runtime_error("decode");
        benchmark::DoNotOptimize(nd);
      }
    } else if (op.starts_with("encode-dom-")) {
      out.clear();
      api::json::EncodeTo(fixed, out);
    } else if (op.starts_with("encode-")) {
      out.clear();
      if (pod) {
        api::EncodePodTo(*typed_pod, out);
      } else {
        api::EncodeNodeTo(*typed_node, out);
      }
    } else {
      throw std::runtime_error("unknown operation");
    }
    benchmark::DoNotOptimize(out.data());
  };
  run();  // warm up outside the count
  CountLoopBody(run, n);
}

}  // namespace
}  // namespace kubesched::bench

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--count=")) {
      const std::string_view spec = arg.substr(8);
      const size_t colon = spec.find(':');
      const int n = colon == std::string_view::npos ? 1000 : std::atoi(std::string(spec.substr(colon + 1)).c_str());
      kubesched::bench::CountLoop(spec.substr(0, colon), n);
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
