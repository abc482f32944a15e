#pragma once
// Statistics a plugin keeps about its own decisions (the batches BatchPlacement planned, the plans
// CrossNodePreemption made), which simulate's summary and the HTML report print. The runtime hands
// them out by plugin name (runtime::Framework::PluginStatistics); only the code that prints one
// plugin's statistics knows their type, and nothing needs the plugin's class to read them.

#include <any>

namespace kubesched::framework {

class StatisticsReporter {
 public:
  virtual ~StatisticsReporter() = default;
  //! A snapshot of the statistics so far, as a value of the plugin's own statistics type.
  virtual std::any Statistics() const = 0;
};

}  // namespace kubesched::framework
