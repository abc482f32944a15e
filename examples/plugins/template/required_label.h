#pragma once
// RequiredLabel: a Filter plugin that keeps only the nodes carrying a label (`label` in its args,
// default "example.com/schedulable"), optionally with a given value (`value`, default: any).

#include <string>
#include <string_view>

#include <sdk/plugin.h>

namespace example {

struct RequiredLabelArgs {
  std::string label = "example.com/schedulable";
  std::string value;  // empty: any value
};

//! Decodes and validates the args (sdk/args.h): unknown fields and wrong types are refused with
//! their field path, as are an empty label.
void DecodeArgs(kubesched::sdk::ArgsDecoder& d, RequiredLabelArgs& args);
//! Encodes the args (their defaults, as `kubesched plugins` shows them), fields in the order read.
void EncodeArgs(kubesched::sdk::ArgsEncoder& e, const RequiredLabelArgs& args);

class RequiredLabel final : public kubesched::framework::FilterPlugin {
 public:
  static constexpr std::string_view kName = "RequiredLabel";
  //! The reason a node is rejected with, as users see it in FailedScheduling messages.
  static constexpr std::string_view kReason = "node(s) didn't have the required label";

  explicit RequiredLabel(RequiredLabelArgs args) : args_(std::move(args)) {}

  std::string_view Name() const override { return kName; }
  kubesched::framework::Status Filter(const kubesched::framework::CycleState& state,
                                      const kubesched::framework::PodInfo& pod,
                                      const kubesched::framework::NodeInfo& node) override;
  // The verdict depends on the node alone: the scheduler may reuse it for pods of the same spec.
  bool FilterIsNodeLocal() const override { return true; }

 private:
  RequiredLabelArgs args_;
};

}  // namespace example
