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

const Status& NodeToStatus::Get(std::string_view node_name) const {
  auto it = statuses_.find(node_name);
  return it != statuses_.end() ? it->second : absent_status_;
}

}  // namespace kubesched::framework
