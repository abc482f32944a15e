#pragma once
// The manifest loader's shared state and stages (not part of the API). manifest.cc runs them in
// order: sources and documents (manifest_sources.cc), decoding each document (load_document.cc:
// DOM, schema check, typed decode, validation), names (assign_names.cc), admission
// (admission.cc), workload expansion (expand.cc), and defaulting with each object's JSON
// (defaults.cc).

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/decode.h"
#include "api/json.h"
#include "api/kinds.h"
#include "api/manifest.h"
#include "api/manifest_sources.h"
#include "api/workloads.h"
#include "api/yaml.h"

namespace kubesched::api::loader {

//! One document, kept until loading ends: its text (lines are found from it only when an error
//! is reported), its DOM (the objects' JSON is encoded from it at the end), and the written form
//! of its YAML scalars.
struct SourceDocument {
  //! `pool` is shared by the documents of one source: RapidJSON's pool allocates 64 KB at a time,
  //! which a document of its own would mostly leave unused (a manifest of 10,000 small documents
  //! would take 640 MB).
  explicit SourceDocument(std::shared_ptr<json::Allocator> pool) : pool(std::move(pool)), dom(this->pool.get()) {}

  std::shared_ptr<json::Allocator> pool;
  std::string text;
  int first_line = 0;  // 0-based line in the file where the text starts
  json::Document dom;
  yaml::ScalarTexts texts;

  //! The 1-based line in the file of the node at `path` from the document's root, 0 when unknown.
  int LineOf(const yaml::SourcePath& path) const;
};

//! Where an object came from, for messages.
struct Origin {
  std::string file;
  int document = 0;
  std::string prefix;  // "items[2]" inside a List, else ""
  std::shared_ptr<SourceDocument> source;
  yaml::SourcePath path;  // from the document's root to the object

  int Line() const { return source ? source->LineOf(path) : 0; }
};

struct Entry {
  Origin origin;
  const KindInfo* kind = nullptr;
  Object object;
  ObjectMeta* meta = nullptr;
  //! The object's value in its document's DOM.
  json::Value* dom = nullptr;
};

//! One document decoded: its objects, or the error that stopped it.
struct ParsedDocument {
  std::vector<Entry> entries;
  std::vector<std::string> skipped_kinds;  // one per object skipped
  std::vector<EmbeddedConfiguration> configurations;
  std::vector<LoadError> warnings;  // fields reported under FieldValidation::kWarn
  std::optional<LoadError> error;
};

//! Reads, checks and decodes one document (load_document.cc). `is_json`: the text is JSON and
//! source->dom already holds it (parsed by the caller), else the text is YAML.
ParsedDocument LoadDocument(std::shared_ptr<SourceDocument> source, bool is_json, const std::string& file, int index,
                            const LoadOptions& options);

//! "Pod default/web", "Node n1": an object as messages name it.
std::string Identity(std::string_view kind, const ObjectMeta& meta, bool namespaced);

//! Everything the stages after decoding share.
class State {
 public:
  explicit State(const LoadOptions& options) : options(options), rng(options.seed) {}

  //! An error found after decoding; it points at the object's first line.
  LoadError ErrorAt(size_t entry, const std::string& field, const std::string& message) const;
  //! "file document 3", for "first defined in ...".
  std::string Where(size_t entry) const;

  const LoadOptions& options;
  Rng rng;
  std::vector<Entry> entries;
  //! "kind/namespace/name" → entry index, for duplicate detection.
  std::unordered_map<std::string, size_t> keys;
  std::vector<std::string> warnings;
  std::vector<EmbeddedConfiguration> configurations;
  //! Pods created from workloads, with their workload's entry (for their JSON).
  std::vector<std::pair<Pod*, size_t>> expanded;
  //! Kinds skipped, in order of first appearance, with how many objects of each.
  std::vector<std::pair<std::string, size_t>> skipped;
  size_t skipped_total = 0;
};

//! generateName, uids, duplicate names, creation timestamps, and the labels and selectors the API
//! server and kubelet add on create (assign_names.cc).
std::optional<LoadError> AssignNames(State& state);

//! The Priority admission plugin: spec.priority and preemptionPolicy from PriorityClasses
//! (admission.cc).
std::optional<LoadError> AdmitPriorities(State& state);
//! The DefaultStorageClass admission plugin: claims naming no class get the default class.
void AdmitStorageClasses(State& state);

//! Numbers the objects, expands workloads into pods and fills `out` (expand.cc).
std::optional<LoadError> ExpandAndCollect(State& state, ClusterObjects& out);

//! The API server's defaulting on each object's DOM, for what kubesched models, then its JSON
//! (defaults.cc). Pods created from workloads get JSON built from their template's DOM.
void DefaultAndEncode(State& state, ClusterObjects& out);

}  // namespace kubesched::api::loader
