#include "framework/cycle_state.h"

#include <algorithm>

namespace kubesched::framework {

void CycleState::Write(const StateKey& key, std::unique_ptr<StateData> data) {
  if (slots_.size() <= key.slot()) slots_.resize(key.slot() + 1);
  slots_[key.slot()] = std::move(data);
}

void CycleState::Delete(const StateKey& key) {
  if (key.slot() < slots_.size()) slots_[key.slot()].reset();
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto copy = std::make_unique<CycleState>();
  copy->slots_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]) copy->slots_[i] = slots_[i]->Clone();
  }
  copy->skip_filter_plugins = skip_filter_plugins;
  copy->skip_score_plugins = skip_score_plugins;
  copy->skip_filter_mask = skip_filter_mask;
  copy->skip_filter_mask_entries = skip_filter_mask_entries;
  copy->record_plugin_metrics = record_plugin_metrics;
  return copy;
}

bool CycleState::SkipsFilter(std::string_view plugin) const {
  return std::find(skip_filter_plugins.begin(), skip_filter_plugins.end(), plugin) != skip_filter_plugins.end();
}

bool CycleState::SkipsScore(std::string_view plugin) const {
  return std::find(skip_score_plugins.begin(), skip_score_plugins.end(), plugin) != skip_score_plugins.end();
}

}  // namespace kubesched::framework
