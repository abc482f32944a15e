#include "scheduler/plugin_results.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "api/json_writer.h"
#include "api/time_format.h"

namespace kubesched::scheduler {
namespace {

using api::json::StringWriter;

std::string_view ResultName(AttemptExplanation::Result r) {
  switch (r) {
    case AttemptExplanation::Result::kScheduled:
      return "Scheduled";
    case AttemptExplanation::Result::kUnschedulable:
      return "Unschedulable";
    case AttemptExplanation::Result::kError:
      return "Error";
  }
  return "Error";
}

void OptionalString(StringWriter& w, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  w.Key(key);
  w.String(value);
}

void ScorePlugins(StringWriter& w, const std::vector<std::pair<std::string, int64_t>>& weights) {
  w.StartArray();
  for (const auto& [name, weight] : weights) {
    w.StartObject();
    w.Key("name");
    w.String(name);
    w.Key("weight");
    w.Int64(weight);
    w.EndObject();
  }
  w.EndArray();
}

// One node's entry, as its own JSON text (the truncation weighs nodes one by one).
std::string EncodeNode(const AttemptExplanation::NodeDetail& n) {
  std::string out;
  StringWriter w(out);
  w.StartObject();
  w.Key("name");
  w.String(n.node);
  w.Key("feasible");
  w.Bool(n.feasible);
  OptionalString(w, "excluded", n.excluded);
  bool any_rejection = false;
  for (const auto& f : n.filters) {
    if (f.status.IsSuccess() || f.status.IsSkip()) continue;
    if (!any_rejection) {
      w.Key("filter");
      w.StartObject();
      any_rejection = true;
    }
    w.Key(f.plugin);
    w.String(f.detail.empty() ? f.status.Message() : fmt::format("{} [{}]", f.status.Message(), f.detail));
  }
  if (any_rejection) w.EndObject();
  if (!n.scores.empty()) {
    w.Key("score");
    w.StartObject();
    for (const auto& s : n.scores) {
      w.Key(s.plugin);
      w.StartObject();
      w.Key("raw");
      w.Int64(s.raw);
      w.Key("normalized");
      w.Int64(s.normalized);
      w.Key("weighted");
      w.Int64(s.weighted);
      w.EndObject();
    }
    w.EndObject();
    w.Key("total");
    w.Int64(n.total);
  }
  w.EndObject();
  w.Finish();
  return out;
}

// Everything before the nodes' array (ending in `"nodes":`).
std::string EncodeHead(const AttemptExplanation& e, const profile::ProfileConfig* profile) {
  std::string out;
  StringWriter w(out);
  w.StartObject();
  w.Key("profile");
  w.String(e.profile);
  w.Key("time");
  w.String(api::FormatRFC3339(e.time_ns));
  w.Key("result");
  w.String(ResultName(e.result));
  OptionalString(w, "selectedNode", e.selected_node);
  OptionalString(w, "message", e.message);
  OptionalString(w, "preFilter", e.pre_filter_message);
  if (profile) {
    for (const auto& [point, names] : profile->plugins) {
      if (point != "filter") continue;
      w.Key("filterPlugins");
      w.StartArray();
      for (const std::string& name : names) w.String(name);
      w.EndArray();
    }
    if (!profile->score_weights.empty()) {
      w.Key("scorePlugins");
      ScorePlugins(w, profile->score_weights);
    }
  }
  w.Key("nodes");
  w.Finish();
  return out;
}

// Everything after the nodes' array.
std::string EncodeTail(const AttemptExplanation& e, size_t truncated) {
  std::string out;
  StringWriter w(out);
  w.Key("truncatedNodes");  // the writer's first event: no comma before it, so one is put here
  w.Uint64(truncated);
  if (!e.plugin_notes.empty()) {
    w.Key("notes");
    w.StartArray();
    for (const auto& [plugin, text] : e.plugin_notes) {
      w.StartObject();
      w.Key("plugin");
      w.String(plugin);
      w.Key("text");
      w.String(text);
      w.EndObject();
    }
    w.EndArray();
  }
  w.Finish();
  return "," + out + "}";
}

// Which nodes fit in `room` bytes (each costs its text and a comma), in the order of preference
// EncodePluginResults documents. Feasible nodes are taken best first while they fit, so that the
// kept ones are always the best; rejected ones wherever they fit. Returns a flag per node.
std::vector<uint8_t> KeepWithin(const AttemptExplanation& e, const std::vector<std::string>& nodes, size_t room) {
  std::vector<uint8_t> keep(nodes.size(), 0);
  auto take = [&](size_t i, size_t limit) {
    if (nodes[i].size() + 1 > limit) return false;
    keep[i] = 1;
    room -= nodes[i].size() + 1;
    return true;
  };
  std::vector<size_t> feasible, rejected;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (e.nodes[i].node == e.selected_node) {
      take(i, room);
    } else if (e.nodes[i].feasible) {
      feasible.push_back(i);
    } else {
      rejected.push_back(i);
    }
  }
  std::stable_sort(feasible.begin(), feasible.end(),
                   [&](size_t a, size_t b) { return e.nodes[a].total > e.nodes[b].total; });
  // Half of the room for the best feasible nodes, the rest for rejected ones, then the best of the
  // feasible nodes left while they fit.
  size_t next = 0;
  const size_t keep_for_rejected = room - room / 2;
  while (next < feasible.size() && room > keep_for_rejected && take(feasible[next], room - keep_for_rejected)) ++next;
  for (size_t i : rejected) take(i, room);
  while (next < feasible.size() && take(feasible[next], room)) ++next;
  return keep;
}

}  // namespace

std::string EncodePluginResults(const AttemptExplanation& e, const profile::ProfileConfig* profile, size_t max_bytes) {
  const std::string head = EncodeHead(e, profile);
  std::vector<std::string> nodes;
  nodes.reserve(e.nodes.size());
  size_t nodes_bytes = 2;  // the brackets
  for (const auto& n : e.nodes) {
    nodes.push_back(EncodeNode(n));
    nodes_bytes += nodes.back().size() + 1;
  }
  std::vector<uint8_t> keep(nodes.size(), 1);
  size_t truncated = 0;
  std::string tail = EncodeTail(e, 0);
  if (head.size() + nodes_bytes + tail.size() > max_bytes) {
    // The tail's count may grow by as many digits as the node count has.
    const size_t fixed = head.size() + 2 + tail.size() + std::to_string(nodes.size()).size();
    keep = KeepWithin(e, nodes, max_bytes > fixed ? max_bytes - fixed : 0);
    truncated = nodes.size() - static_cast<size_t>(std::count(keep.begin(), keep.end(), 1));
    tail = EncodeTail(e, truncated);
  }
  std::string out = head;
  out += '[';
  bool first = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!keep[i]) continue;
    if (!first) out += ',';
    out += nodes[i];
    first = false;
  }
  out += ']';
  out += tail;
  return out;
}

std::string EncodeProfileConfigs(std::span<const profile::ProfileConfig> profiles) {
  std::string out;
  StringWriter w(out);
  w.StartObject();
  w.Key("profiles");
  w.StartArray();
  for (const profile::ProfileConfig& p : profiles) {
    w.StartObject();
    w.Key("schedulerName");
    w.String(p.scheduler_name);
    w.Key("plugins");
    w.StartObject();
    for (const auto& [point, names] : p.plugins) {
      w.Key(point);
      w.StartArray();
      for (const std::string& name : names) w.String(name);
      w.EndArray();
    }
    w.EndObject();
    w.Key("scorePlugins");
    ScorePlugins(w, p.score_weights);
    if (!p.plugin_args.empty()) {
      w.Key("pluginConfig");
      w.StartArray();
      for (const auto& [name, args] : p.plugin_args) {
        w.StartObject();
        w.Key("name");
        w.String(name);
        w.Key("args");
        w.RawValue(args.IsNull() ? std::string("null") : args.View().Encode());
        w.EndObject();
      }
      w.EndArray();
    }
    if (p.percentage_of_nodes_to_score) {
      w.Key("percentageOfNodesToScore");
      w.Int(*p.percentage_of_nodes_to_score);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Finish();
  return out;
}

}  // namespace kubesched::scheduler
