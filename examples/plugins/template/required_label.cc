#include "required_label.h"

namespace example {

void DecodeArgs(kubesched::sdk::ArgsDecoder& d, RequiredLabelArgs& args) {
  d.String("label", args.label);
  d.String("value", args.value);
  if (args.label.empty()) d.Required("label", "the label nodes must carry");
}

void EncodeArgs(kubesched::sdk::ArgsEncoder& e, const RequiredLabelArgs& args) {
  e.String("label", args.label);
  e.String("value", args.value);
}

kubesched::framework::Status RequiredLabel::Filter(const kubesched::framework::CycleState& /*state*/,
                                                   const kubesched::framework::PodInfo& /*pod*/,
                                                   const kubesched::framework::NodeInfo& node) {
  const std::string* value = node.node()->metadata.labels.Find(args_.label);
  if (value == nullptr || (!args_.value.empty() && *value != args_.value)) {
    // Unresolvable: evicting pods would not add the label, so preemption need not try this node.
    return kubesched::framework::Status::UnschedulableAndUnresolvable(std::string(kReason));
  }
  return kubesched::framework::Status::Success();
}

}  // namespace example
