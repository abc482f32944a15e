#include "framework/interface.h"

namespace kubesched::framework {

PreFilterResult PreFilterResult::Merge(const PreFilterResult& other) const {
  if (AllNodes()) return other;
  if (other.AllNodes()) return *this;
  PreFilterResult out;
  out.node_names.emplace();
  for (const auto& n : *node_names) {
    if (other.node_names->contains(n)) out.node_names->insert(n);
  }
  return out;
}

void NodeToStatus::BuildIndex() const {
  if (indexed_) return;
  index_.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].first] = i;  // the last wins
  indexed_ = true;
}

void NodeToStatus::Set(std::string_view node_name, Status status) {
  BuildIndex();
  if (auto it = index_.find(node_name); it != index_.end()) {
    entries_[it->second].second = std::move(status);
    return;
  }
  Append(node_name, std::move(status));
}

const Status& NodeToStatus::Get(std::string_view node_name) const {
  BuildIndex();
  auto it = index_.find(node_name);
  return it != index_.end() ? entries_[it->second].second : absent_status_;
}

bool NodeToStatus::Contains(std::string_view node_name) const {
  BuildIndex();
  return index_.contains(node_name);
}

}  // namespace kubesched::framework
