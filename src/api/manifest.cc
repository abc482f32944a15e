// The manifest loader: runs the stages of loader_internal.h in order, all-or-error.

#include "api/manifest.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "api/loader_internal.h"
#include "util/parallelizer.h"

namespace kubesched::api {
namespace loader {

LoadError State::ErrorAt(size_t entry, const std::string& field, const std::string& message) const {
  const Entry& e = entries[entry];
  std::string path = e.origin.prefix;
  if (!field.empty()) path = path.empty() ? field : path + "." + field;
  return LoadError{e.origin.file, e.origin.document, Identity(e.kind->kind, *e.meta, e.kind->namespaced),
                   path,          message,           e.origin.Line()};
}

std::string State::Where(size_t entry) const {
  const Entry& e = entries[entry];
  return e.origin.file + " document " + std::to_string(e.origin.document);
}

namespace {

void Absorb(State& state, ParsedDocument& doc) {
  for (Entry& e : doc.entries) state.entries.push_back(std::move(e));
  for (LoadError& w : doc.warnings) state.warnings.push_back(w.ToString());
  for (EmbeddedConfiguration& c : doc.configurations) state.configurations.push_back(std::move(c));
  for (std::string& kind : doc.skipped_kinds) {
    ++state.skipped_total;
    auto it = std::find_if(state.skipped.begin(), state.skipped.end(), [&](const auto& s) { return s.first == kind; });
    if (it == state.skipped.end()) {
      state.skipped.emplace_back(std::move(kind), 1);
    } else {
      ++it->second;
    }
  }
}

// Documents per run of documents read on one thread, and the most runs (one per core, up to this).
constexpr size_t kDocumentsPerRun = 256;
constexpr size_t kMaxRuns = 16;

// Reads one source's documents into the state; the first error stops it.
std::optional<LoadError> AddSource(State& state, std::string_view text, const std::string& name) {
  std::vector<RawDocument> raw = SplitDocuments(text);
  auto pool = std::make_shared<json::Allocator>();
  if (raw.size() == 1 && raw.front().json) {
    // One JSON value, read by the JSON codec; if it is not one after all (JSON followed by more
    // documents, say), it is read as YAML, which reads JSON's flow style too.
    auto source = std::make_shared<SourceDocument>(pool);
    source->text = std::move(raw.front().text);
    if (json::Parse(source->text, source->dom)) {
      raw.clear();
      ParsedDocument doc = LoadDocument(std::move(source), true, name, 1, state.options);
      if (doc.error) return std::move(doc.error);
      Absorb(state, doc);
      return std::nullopt;
    }
    raw = SplitYamlDocuments(source->text);
  }
  // The documents are independent: YAML parsing (most of loading a large manifest) runs on every
  // core, in runs of consecutive documents, each run with a pool of its own (a pool is not
  // thread-safe). They are absorbed in order, so what is loaded, warned about or refused first is
  // what a serial read gives.
  const size_t n = raw.size();
  std::vector<ParsedDocument> docs(n);
  const size_t runs = std::clamp<size_t>(n / kDocumentsPerRun, 1, kMaxRuns);
  std::vector<std::exception_ptr> failures(n);  // what reading a document threw
  const auto load_run = [&](int run) {
    const size_t begin = n * static_cast<size_t>(run) / runs, end = n * (static_cast<size_t>(run) + 1) / runs;
    auto run_pool = run == 0 ? pool : std::make_shared<json::Allocator>();
    for (size_t i = begin; i < end; ++i) {
      try {
        auto source = std::make_shared<SourceDocument>(run_pool);
        source->text = std::move(raw[i].text);
        source->first_line = raw[i].first_line;
        docs[i] = LoadDocument(std::move(source), false, name, static_cast<int>(i) + 1, state.options);
      } catch (...) {
        failures[i] = std::current_exception();
        return;
      }
      if (docs[i].error) return;  // the documents after it are not needed
    }
  };
  if (runs == 1) {
    load_run(0);
  } else {
    util::Parallelizer parallelizer(
        static_cast<int>(std::min<unsigned>(std::thread::hardware_concurrency(), kMaxRuns)));
    parallelizer.Until(static_cast<int>(runs), load_run);
  }
  for (size_t i = 0; i < n; ++i) {
    if (failures[i]) std::rethrow_exception(failures[i]);
    if (docs[i].error) return std::move(docs[i].error);
    Absorb(state, docs[i]);
  }
  return std::nullopt;
}

}  // namespace
}  // namespace loader

std::string LoadError::ToString() const {
  std::string out = file.empty() ? "<input>" : file;
  if (document > 0) out += ": document " + std::to_string(document);
  if (!object.empty()) out += " (" + object + ")";
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  if (line > 0) out += " (line " + std::to_string(line) + ")";
  return out;
}

std::expected<ClusterObjects, LoadError> LoadManifestSources(const std::vector<ManifestSource>& sources,
                                                             const LoadOptions& options) {
  try {
    loader::State state(options);
    for (const ManifestSource& s : sources) {
      if (auto err = loader::AddSource(state, s.text, s.name)) return std::unexpected(std::move(*err));
    }
    if (auto err = loader::AssignNames(state)) return std::unexpected(std::move(*err));
    if (auto err = loader::AdmitPriorities(state)) return std::unexpected(std::move(*err));
    loader::AdmitStorageClasses(state);
    ClusterObjects out;
    out.warnings = std::move(state.warnings);
    out.object_count = state.entries.size() + state.skipped_total + state.configurations.size();
    out.scheduler_configurations = std::move(state.configurations);
    if (auto err = loader::ExpandAndCollect(state, out)) return std::unexpected(std::move(*err));
    loader::DefaultAndEncode(state, out);
    return out;
  } catch (const std::exception& e) {
    // Nothing should get here; if something does, it is still an error and not a crash.
    return std::unexpected(LoadError{"", 0, "", "", std::string("internal error while loading: ") + e.what(), 0});
  }
}

std::expected<ClusterObjects, LoadError> LoadManifests(const std::vector<std::string>& files,
                                                       const LoadOptions& options) {
  std::vector<std::string> paths;
  for (const std::string& file : files) {
    if (auto err = ExpandPath(file, options.recursive, paths))
      return std::unexpected(LoadError{file, 0, "", "", *err, 0});
  }
  std::vector<ManifestSource> sources;
  sources.reserve(paths.size());
  for (const std::string& path : paths) {
    ManifestSource s{path == "-" ? std::string(kStdinName) : path, ""};
    if (auto err = ReadFile(path, s.text)) return std::unexpected(LoadError{path, 0, "", "", *err, 0});
    sources.push_back(std::move(s));
  }
  return LoadManifestSources(sources, options);
}

std::expected<ClusterObjects, LoadError> LoadManifestsFromString(std::string_view text, std::string_view source_name,
                                                                 const LoadOptions& options) {
  return LoadManifestSources({ManifestSource{std::string(source_name), std::string(text)}}, options);
}

}  // namespace kubesched::api
