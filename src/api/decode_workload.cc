// Workload controllers (Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet,
// Job, CronJob): replicas, selector and pod template, with batch/v1's and v1's defaulting.

#include "api/decode_internal.h"

namespace kubesched::api::decode {
namespace {

constexpr std::pair<std::string_view, CompletionMode> kCompletionModes[] = {
    {"NonIndexed", CompletionMode::kNonIndexed},
    {"Indexed", CompletionMode::kIndexed},
};

// The spec of a workload: for a CronJob, that of its jobTemplate.
void ReadWorkloadSpec(const MapView& spec, Workload& w) {
  const bool job = w.kind == "Job" || w.kind == "CronJob";
  if (job) {
    auto parallelism = spec.OptInt32("parallelism", 0);
    auto completions = spec.OptInt32("completions", 0);
    // batch/v1 defaulting: both absent → 1 and 1; only parallelism → a work queue, which we run
    // as `parallelism` pods.
    w.replicas = parallelism.value_or(1);
    w.completions = completions.value_or(parallelism.value_or(1));
    w.suspend = spec.Bool("suspend");
    if (spec.Has("completionMode")) {
      w.completion_mode = spec.Enum_("completionMode", kCompletionModes);
    }
    if (w.completion_mode == CompletionMode::kIndexed && !completions) {
      Fail(spec.At("completions"), spec.PathOf("completions"), "required when completionMode is Indexed",
           kFieldValueRequired);
    }
  } else if (w.kind != "DaemonSet") {
    w.replicas = spec.OptInt32("replicas", 0).value_or(1);
  }
  if (w.kind == "ReplicationController") {
    // A plain label map, not a LabelSelector.
    if (spec.Has("selector"))
      w.selector = LabelSelector{.match_labels = spec.LabelMap("selector"), .match_expressions = {}};
  } else {
    w.selector = ReadOptLabelSelector(spec, "selector");
  }
  if (!spec.Has("template"))
    Fail(spec.At("template"), spec.PathOf("template"), "required field is missing", kFieldValueRequired);
  const MapView tmpl = spec.Map("template");
  const MapView tmpl_meta = tmpl.Map("metadata");
  w.template_.metadata.labels = tmpl_meta.LabelMap("labels");
  w.template_.metadata.annotations = tmpl_meta.AnnotationMap("annotations");
  CheckTimelineAnnotations(tmpl_meta.Map("annotations"));
  if (!tmpl.Has("spec")) Fail(tmpl.At("spec"), tmpl.PathOf("spec"), "required field is missing", kFieldValueRequired);
  w.template_.spec = ReadPodSpec(tmpl.Map("spec"));

  if (job) {
    // batch/v1 validation: a Job's pods must not restart in place (the template's restartPolicy
    // defaults to Always, which is refused), as the API server refuses such a Job.
    const MapView pod_spec = tmpl.Map("spec");
    const std::string restart = pod_spec.Has("restartPolicy") ? pod_spec.String("restartPolicy") : "Always";
    if (restart != "OnFailure" && restart != "Never") {
      Fail(pod_spec.At("restartPolicy"), pod_spec.PathOf("restartPolicy"),
           "unsupported value " + GoQuote(restart) + "; supported values: \"OnFailure\", \"Never\"",
           kFieldValueNotSupported);
    }
    // The Job controller labels its pods and, unless told otherwise, selects them by uid; the
    // uid is only known later, so LoadManifests finishes this (see FinishJob).
    if (w.selector && !w.selector->Empty() && !w.selector->Matches(w.template_.metadata.labels)) {
      Fail(spec.At("selector"), spec.PathOf("selector"), "does not match the template labels");
    }
    return;
  }
  if (w.kind == "ReplicationController" && (!w.selector || w.selector->Empty())) {
    // Defaulting: a ReplicationController without a selector selects its template's labels.
    if (w.template_.metadata.labels.empty()) {
      Fail(spec.At("selector"), spec.PathOf("selector"),
           "required field is missing (and spec.template.metadata.labels, its default, is empty)");
    }
    w.selector = LabelSelector{.match_labels = w.template_.metadata.labels, .match_expressions = {}};
  }
  if (!w.selector) Fail(spec.At("selector"), spec.PathOf("selector"), "required field is missing", kFieldValueRequired);
  if (w.selector->Empty()) {
    Fail(spec.At("selector"), spec.PathOf("selector"), "must not be empty (an empty selector would select every pod)");
  }
  if (!w.selector->Matches(w.template_.metadata.labels)) {
    Fail(spec.At("selector"), spec.PathOf("selector"),
         "does not match the template labels (spec.template.metadata.labels must satisfy spec.selector)");
  }
}

}  // namespace

void ReadWorkload(const MapView& obj, Workload& w) {
  const MapView spec = obj.Map("spec");
  if (w.kind != "CronJob") {
    ReadWorkloadSpec(spec, w);
    return;
  }
  spec.RequiredString("schedule");
  if (!spec.Has("jobTemplate"))
    Fail(spec.At("jobTemplate"), spec.PathOf("jobTemplate"), "required field is missing", kFieldValueRequired);
  const MapView job_template = spec.Map("jobTemplate");
  if (!job_template.Has("spec")) {
    Fail(job_template.At("spec"), job_template.PathOf("spec"), "required field is missing", kFieldValueRequired);
  }
  ReadWorkloadSpec(job_template.Map("spec"), w);
}

}  // namespace kubesched::api::decode
