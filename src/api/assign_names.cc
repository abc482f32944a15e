// The loader's naming stage, what the API server (and kubelet) do to an object on create: a name
// from generateName, a uid, the creation timestamp, duplicate names refused; nodes get their
// hostname label, namespaces their name label, Jobs the labels and selector of the Job strategy.

#include "api/loader_internal.h"
#include "util/go_quote.h"

namespace kubesched::api::loader {
namespace {

using util::GoQuote;

void FinishJob(Workload& w) {
  // What the Job API strategy does on create: label the template with the job's name and uid and,
  // without a selector of its own, select by uid.
  Labels& labels = w.template_.metadata.labels;
  labels.Set(std::string(kLabelControllerUID), w.metadata.uid);
  labels.Set(std::string(kLabelBatchControllerUID), w.metadata.uid);
  labels.Set(std::string(kLabelJobName), w.metadata.name);
  labels.Set(std::string(kLabelBatchJobName), w.metadata.name);
  if (!w.selector || w.selector->Empty()) {
    LabelSelector s;
    s.match_labels.Set(std::string(kLabelBatchControllerUID), w.metadata.uid);
    w.selector = std::move(s);
  }
}

}  // namespace

std::optional<LoadError> AssignNames(State& state) {
  for (size_t i = 0; i < state.entries.size(); ++i) {
    Entry& e = state.entries[i];
    ObjectMeta& meta = *e.meta;
    // Kinds of the same name in two groups (the two PodGroups) are told apart by their schema's.
    const std::string prefix = std::string(e.kind->SchemaName()) + "/" + meta.namespace_ + "/";
    if (meta.name.empty()) {
      // generateName: the API server retries until the name is free.
      do {
        meta.name = GenerateName(meta.generate_name, state.rng);
      } while (state.keys.contains(prefix + meta.name));
    }
    auto [it, inserted] = state.keys.emplace(prefix + meta.name, i);
    if (!inserted) {
      return state.ErrorAt(i, "metadata.name",
                           "duplicate " + std::string(e.kind->kind) + " " + GoQuote(meta.name) + " (first defined in " +
                               state.Where(it->second) + ")");
    }
    if (meta.uid.empty()) meta.uid = GenerateUID(e.kind->SchemaName(), meta.namespace_, meta.name);
    if (meta.creation_timestamp_ns == 0) meta.creation_timestamp_ns = state.options.creation_timestamp_ns;
    if (auto* node = std::get_if<std::shared_ptr<Node>>(&e.object)) {
      // The kubelet labels its node with its hostname.
      if (!(*node)->metadata.labels.Has(kLabelHostname)) {
        (*node)->metadata.labels.Set(std::string(kLabelHostname), (*node)->metadata.name);
      }
    } else if (auto* ns = std::get_if<std::shared_ptr<Namespace>>(&e.object)) {
      (*ns)->metadata.labels.Set(std::string(kLabelMetadataName), (*ns)->metadata.name);
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&e.object)) {
      if ((*w)->kind == "Job") FinishJob(**w);
    }
  }
  return std::nullopt;
}

}  // namespace kubesched::api::loader
