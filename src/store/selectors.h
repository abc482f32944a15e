#pragma once
// Label and field selectors as the API takes them in list and watch requests
// (k8s.io/apimachinery/pkg/labels.Parse and pkg/fields.ParseSelector), and metav1.LabelSelector
// as objects carry it (PodDisruptionBudgets, ReplicaSets, Deployments), all matched against an
// Object's sorted labels and selectable fields.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.h"
#include "api/labels.h"
#include "store/store.h"

namespace kubesched::store {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

//! Requirements ANDed (matched as the scheduler matches them: api::SelectorRequirement); empty
//! matches everything. `nothing` (a null metav1.LabelSelector) matches no object.
struct LabelSelectorExpr {
  std::vector<api::SelectorRequirement> requirements;
  bool nothing = false;

  //! `labels` sorted by key, as Object::labels is.
  bool Matches(const LabelPairs& labels) const;
  bool Empty() const { return requirements.empty() && !nothing; }
};

//! labels.Parse: "app=web,tier!=db", "env in (a,b)", "env notin (c)", "gpu", "!gpu",
//! "replicas>2". Errors are 400 BadRequest.
Result<LabelSelectorExpr> ParseLabelSelector(std::string_view text);

//! metav1.LabelSelector (matchLabels and matchExpressions); a null or absent value gives a
//! selector matching nothing, `{}` one matching everything (LabelSelectorAsSelector).
Result<LabelSelectorExpr> LabelSelectorFromJson(const api::json::Value* selector);

//! One field requirement ("spec.nodeName=n1", "status.phase!=Failed").
struct FieldRequirement {
  std::string field;
  bool equals = true;
  std::string value;
};

//! fields.ParseSelector, checking each key against metadata.name, metadata.namespace and the
//! type's field_selectors (400 `field label not supported: x` otherwise).
Result<std::vector<FieldRequirement>> ParseFieldSelector(std::string_view text, const ResourceType& type);

//! Both selectors of a list or watch, parsed once.
struct CompiledSelectors {
  LabelSelectorExpr labels;
  std::vector<FieldRequirement> fields;

  bool Empty() const { return labels.Empty() && fields.empty(); }
  bool Matches(const Object& object) const;
};

Result<CompiledSelectors> CompileSelectors(const Selectors& selectors, const ResourceType& type);

}  // namespace kubesched::store
