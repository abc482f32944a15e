// Fuzz target for custom resources' schemas (api/structural_schema.h): the input is a JSON array
// [schema, object], both user input on the API (a CRD's openAPIV3Schema, a custom resource).
// Never crash, hang or throw; the schema check says something or nothing; pruning is idempotent
// (what one pass keeps, a second keeps whole) and validation of the pruned object removes nothing.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/json.h"
#include "api/structural_schema.h"
#include "codec_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  api::json::Document doc;
  if (!api::json::Parse(text, doc) || !doc.IsArray() || doc.Size() != 2) return 0;
  const api::json::Value& schema = doc[0];
  (void)api::StructuralSchemaProblems(schema, "spec.versions[0].schema.openAPIV3Schema");
  api::json::Document object;
  object.CopyFrom(doc[1], object.GetAllocator());
  (void)api::PruneAndValidate(object, object.GetAllocator(), schema);
  const std::string once = api::json::Encode(object);
  api::StructuralCheck again = api::PruneAndValidate(object, object.GetAllocator(), schema);
  fuzz::Check(again.pruned.empty());
  fuzz::Check(api::json::Encode(object) == once);
  return 0;
}
