// Object-level validation the API server does on create, beyond each field's own value:
// a name (or generateName) is required, and names follow the DNS rules of their kind.

#include "api/decode_internal.h"
#include "api/names.h"
#include "util/go_quote.h"

namespace kubesched::api::decode {

void ValidateMetadata(const MapView& meta_view, const KindInfo& info, const ObjectMeta& meta) {
  if (meta.name.empty() && meta.generate_name.empty()) {
    Fail(meta_view.At("name"), meta_view.PathOf("name"), "required field is missing (set name or generateName)",
         kFieldValueRequired);
  }
  // Namespaces are DNS-1123 labels, the other kinds kubesched reads DNS-1123 subdomains. A
  // generateName is checked as a prefix (a trailing '-' is fine).
  auto check = [&](std::string_view field, const std::string& value, bool prefix, bool label) {
    if (value.empty()) return;
    std::string_view checked = value;
    std::string with_end;  // a generateName's trailing '-' as a letter, checked as a name
    if (prefix && value.ends_with('-')) {
      with_end = value;
      with_end.back() = 'a';
      checked = with_end;
    }
    const std::vector<std::string> errs = label ? IsDNS1123Label(checked) : IsDNS1123Subdomain(checked);
    if (!errs.empty()) {
      Fail(meta_view.At(field), meta_view.PathOf(field),
           "invalid " + std::string(field) + " " + GoQuote(value) + ": " + Join(errs));
    }
  };
  const bool label = info.kind == "Namespace";
  check("name", meta.name, false, label);
  check("generateName", meta.generate_name, true, label);
  if (info.namespaced) check("namespace", meta.namespace_, false, true);
}

}  // namespace kubesched::api::decode
