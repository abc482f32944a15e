#include "api/structural_schema.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace kubesched::api {
namespace {

json::Document ParseOrFail(std::string_view text) {
  json::Document doc;
  const auto parsed = json::Parse(text, doc);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().ToString()) << "\n" << text;
  return doc;
}

// A schema whose spec has these properties ({"name": {...}, ...}) and `extra` spec keywords.
std::string SpecSchema(std::string_view properties, std::string_view extra = "") {
  return std::string(R"({"type":"object","properties":{"spec":{"type":"object",)") + std::string(extra) +
         R"("properties":)" + std::string(properties) + "}}}";
}

// A custom resource with this spec.
std::string Resource(std::string_view spec) {
  return std::string(R"({"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a"},"spec":)") +
         std::string(spec) + "}";
}

// "field: message [reason]", upstream's field.Error text with the cause type.
std::vector<std::string> Render(const std::vector<SchemaViolation>& violations) {
  std::vector<std::string> out;
  for (const SchemaViolation& v : violations) out.push_back(v.field + ": " + v.message + " [" + v.reason + "]");
  return out;
}

StructuralCheck Check(std::string_view schema_text, json::Document& object) {
  json::Document schema = ParseOrFail(schema_text);
  return PruneAndValidate(object, object.GetAllocator(), schema);
}

// Pruning, with upstream's cases (pkg/apiserver/schema/pruning/algorithm_test.go) moved under
// spec, since here the root is always a resource's.
TEST(StructuralSchemaTest, Prunes) {
  struct Case {
    std::string name;
    std::string schema;
    std::string object;
    std::string want;
    std::vector<std::string> pruned;
  };
  const std::vector<Case> cases = {
      {"keeps apiVersion, kind and metadata at the root, unpruned",
       SpecSchema(R"({"a":{"type":"string"}})"),
       R"({"apiVersion":"x/v1","kind":"X","metadata":{"name":"n","unknown":"u"},"spec":{"a":"1","b":"2"},"status":{"c":1}})",
       R"({"apiVersion":"x/v1","kind":"X","metadata":{"name":"n","unknown":"u"},"spec":{"a":"1"}})",
       {"spec.b", "status"}},
      {"object list",
       SpecSchema(
           R"({"array":{"type":"array","items":{"type":"object","properties":{"a":{"type":"integer"},"c":{"type":"integer"}}}}})"),
       Resource(R"({"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]})"),
       Resource(R"({"array":[{"a":1},{},{"a":1,"c":3}]})"),
       {"spec.array[1].b", "spec.array[2].b"}},
      {"list without items: objects in it are emptied, scalars stay",
       SpecSchema(R"({"list":{"type":"array"}})"),
       Resource(R"({"list":[{"a":1},2]})"),
       Resource(R"({"list":[{},2]})"),
       {"spec.list[0].a"}},
      {"nested x-kubernetes-preserve-unknown-fields",
       SpecSchema(R"({
          "alpha": {"type": "string"},
          "beta": {"type": "number"},
          "pruning": {"type": "object", "properties": {
            "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "pruning": {"type": "object"}}},
          "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
            "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "pruning": {"type": "object"}}},
          "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}}},
          "preservingAdditionalPropertiesKeyPruneValues": {"type": "object",
            "additionalProperties": {"type": "object", "properties": {"specified": {"type": "object"}}}}})",
                  R"("x-kubernetes-preserve-unknown-fields":true,)"),
       Resource(R"({
          "unspecified": "bar", "alpha": "abc", "beta": 42.0,
          "unspecifiedObject": {"unspecified": "bar"},
          "pruning": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                      "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"}},
          "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                         "pruning": {"unspecified": "bar"}, "preserving": {"unspecified": "bar"}},
          "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {
            "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
          "preservingAdditionalPropertiesKeyPruneValues": {
            "foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}}})"),
       Resource(R"({
          "unspecified": "bar", "alpha": "abc", "beta": 42.0,
          "unspecifiedObject": {"unspecified": "bar"},
          "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
          "preserving": {"unspecified": "bar", "unspecifiedObject": {"unspecified": "bar"},
                         "pruning": {}, "preserving": {"unspecified": "bar"}},
          "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields": {"foo": {"specified": {}}},
          "preservingAdditionalPropertiesKeyPruneValues": {"foo": {"specified": {}}}})"),
       {"spec.preserving.pruning.unspecified",
        "spec.preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified",
        "spec.preservingAdditionalPropertiesKeyPruneValues.foo.unspecified",
        "spec.preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified",
        "spec.preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified",
        "spec.pruning.pruning.unspecified", "spec.pruning.unspecified", "spec.pruning.unspecifiedObject"}},
      {"additionalProperties with a schema prunes each value by it",
       SpecSchema(R"({"a":{"type":"integer"},"c":{"type":"object","additionalProperties":{"type":"integer"}}})"),
       Resource(R"({"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}})"),
       Resource(R"({"a":1,"c":{"a":1,"b":2,"c":{}}})"),
       {"spec.b", "spec.c.c.a"}},
      // Upstream's StructuralOrBool without a schema: the keys stay, objects under them are emptied.
      {"additionalProperties true keeps every key, not what is inside objects",
       SpecSchema(R"({"a":{"type":"integer"},"c":{"type":"object","additionalProperties":true}})"),
       Resource(R"({"a":1,"b":1,"c":{"a":1,"b":[2,{"x":1}],"c":{"a":1}}})"),
       Resource(R"({"a":1,"c":{"a":1,"b":[2,{}],"c":{}}})"),
       {"spec.b", "spec.c.b[1].x", "spec.c.c.a"}},
      {"additionalProperties false prunes as true does (validation refuses the keys)",
       SpecSchema(R"({"c":{"type":"object","additionalProperties":false}})"),
       Resource(R"({"c":{"a":1,"c":{"a":1}}})"),
       Resource(R"({"c":{"a":1,"c":{}}})"),
       {"spec.c.c.a"}},
      {"x-kubernetes-embedded-resource keeps apiVersion, kind and metadata",
       SpecSchema(R"({
          "pruned": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"spec": {"type": "object"}}},
          "preserving": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true},
          "nested": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "spec": {"type": "object", "properties": {
              "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                           "properties": {"spec": {"type": "object"}}}}}}}})"),
       Resource(R"({
          "unspecified": "bar",
          "pruned": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                     "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}},
          "preserving": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                         "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}},
          "nested": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                     "metadata": {"name": "instance", "unspecified": "bar"},
                     "spec": {"unspecified": "bar", "embedded": {
                       "apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                       "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}}}}})"),
       Resource(R"({
          "pruned": {"apiVersion": "foo/v1", "kind": "Foo",
                     "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {}},
          "preserving": {"apiVersion": "foo/v1", "kind": "Foo", "unspecified": "bar",
                         "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {"unspecified": "bar"}},
          "nested": {"apiVersion": "foo/v1", "kind": "Foo",
                     "metadata": {"name": "instance", "unspecified": "bar"},
                     "spec": {"embedded": {
                       "apiVersion": "foo/v1", "kind": "Foo",
                       "metadata": {"name": "instance", "unspecified": "bar"}, "spec": {}}}}})"),
       {"spec.nested.spec.embedded.spec.unspecified", "spec.nested.spec.embedded.unspecified",
        "spec.nested.spec.unspecified", "spec.nested.unspecified", "spec.pruned.spec.unspecified",
        "spec.pruned.unspecified", "spec.unspecified"}},
      {"x-kubernetes-int-or-string keeps integers and strings, empties objects",
       SpecSchema(R"({"port":{"x-kubernetes-int-or-string":true},"target":{"x-kubernetes-int-or-string":true},
                      "other":{"x-kubernetes-int-or-string":true}})"),
       Resource(R"({"port":80,"target":"http","other":{"a":1}})"),
       Resource(R"({"port":80,"target":"http","other":{}})"),
       {"spec.other.a"}},
      {"allOf, anyOf, oneOf and not add no fields",
       SpecSchema(R"({"a":{"type":"string"}})",
                  R"("allOf":[{"properties":{"b":{"type":"string"}}}],"anyOf":[{"properties":{"c":{}}}],
                     "oneOf":[{"properties":{"d":{}}}],"not":{"properties":{"e":{}}},)"),
       Resource(R"({"a":"x","b":"y","c":1,"d":2,"e":3})"),
       Resource(R"({"a":"x"})"),
       {"spec.b", "spec.c", "spec.d", "spec.e"}},
      {"unknown fields named with dots and slashes",
       SpecSchema(R"({"labels":{"type":"object","properties":{"app":{"type":"string"}}}})"),
       Resource(R"({"labels":{"app":"a","example.com/tier":"b"}})"),
       Resource(R"({"labels":{"app":"a"}})"),
       {"spec.labels[example.com/tier]"}},
      {"x-kubernetes-preserve-unknown-fields at the root keeps everything",
       R"({"type":"object","x-kubernetes-preserve-unknown-fields":true})",
       Resource(R"({"x":{"y":1}})"),
       Resource(R"({"x":{"y":1}})"),
       {}},
      {"a schema that is not an object keeps only what every resource has",
       R"("nope")",
       Resource(R"({"x":1})"),
       R"({"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a"}})",
       {"spec"}},
      // The server drops, after pruning, nulls the schema allows neither as a value nor by default.
      {"nulls the schema does not allow are dropped, not reported",
       SpecSchema(R"({"a":{"type":"string"},"b":{"type":"string","nullable":true},
                      "c":{"type":"string","default":"x"},"m":{"type":"object","additionalProperties":{"type":"string"}}})"),
       Resource(R"({"a":null,"b":null,"c":null,"d":null,"m":{"k":null}})"),
       Resource(R"({"b":null,"c":null,"m":{}})"),
       {"spec.d"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json::Document object = ParseOrFail(c.object);
    const StructuralCheck check = Check(c.schema, object);
    EXPECT_EQ(json::Encode(object), json::Encode(ParseOrFail(c.want)));
    EXPECT_EQ(check.pruned, c.pruned);
  }
}

TEST(StructuralSchemaTest, Validates) {
  struct Case {
    std::string name;
    std::string properties;  // of spec
    std::string spec;
    std::vector<std::string> want;
    std::string extra = "";  // spec's other keywords
  };
  const std::string ports = R"({"ports":{"type":"array","x-kubernetes-list-type":"map",
      "x-kubernetes-list-map-keys":["name"],"items":{"type":"object","properties":{
      "name":{"type":"string"},"protocol":{"type":"string"},"port":{"type":"integer"}}}}})";
  const std::vector<Case> cases = {
      {"a valid spec",
       R"({"replicas":{"type":"integer"},"name":{"type":"string"}})",
       R"({"replicas":3,"name":"a"})",
       {}},
      {"integer given a string",
       R"({"minMember":{"type":"integer"}})",
       R"({"minMember":"three"})",
       {R"(spec.minMember: Invalid value: "string": spec.minMember in body must be of type integer: "string" [FieldValueTypeInvalid])"}},
      {"string given a number",
       R"({"name":{"type":"string"}})",
       R"({"name":1.5})",
       {R"(spec.name: Invalid value: "number": spec.name in body must be of type string: "number" [FieldValueTypeInvalid])"}},
      {"object given a list",
       R"({"template":{"type":"object"}})",
       R"({"template":[1]})",
       {R"(spec.template: Invalid value: "array": spec.template in body must be of type object: "array" [FieldValueTypeInvalid])"}},
      {"list given an object (pruned empty first)",
       R"({"list":{"type":"array","items":{"type":"string"}}})",
       R"({"list":{"a":1}})",
       {R"(spec.list: Invalid value: "object": spec.list in body must be of type array: "object" [FieldValueTypeInvalid])"}},
      {"boolean given a string",
       R"({"on":{"type":"boolean"}})",
       R"({"on":"yes"})",
       {R"(spec.on: Invalid value: "string": spec.on in body must be of type boolean: "string" [FieldValueTypeInvalid])"}},
      {"number takes an integer, integer an integral float",
       R"({"ratio":{"type":"number"},"n":{"type":"integer"}})",
       R"({"ratio":2,"n":2.0})",
       {}},
      {"integer refuses a fraction",
       R"({"n":{"type":"integer"}})",
       R"({"n":2.5})",
       {R"(spec.n: Invalid value: "number": spec.n in body must be of type integer: "number" [FieldValueTypeInvalid])"}},
      {"null in a list whose items are not nullable",
       R"({"list":{"type":"array","items":{"type":"string"}}})",
       R"({"list":["a",null]})",
       {R"(spec.list[1]: Invalid value: "null": spec.list[1] in body must be of type string: "null" [FieldValueTypeInvalid])"}},
      {"nullable takes null",
       R"({"list":{"type":"array","items":{"type":"string","nullable":true}},
          "x":{"type":"string","nullable":true}})",
       R"({"list":["a",null],"x":null})",
       {}},
      {"required fields, in the schema's order",
       R"({"replicas":{"type":"integer"},"name":{"type":"string"}})",
       R"({})",
       {"spec.replicas: Required value [FieldValueRequired]", "spec.name: Required value [FieldValueRequired]"},
       R"("required":["replicas","name"],)"},
      {"a required field set to null is dropped, then missing",
       R"({"name":{"type":"string"}})",
       R"({"name":null})",
       {"spec.name: Required value [FieldValueRequired]"},
       R"("required":["name"],)"},
      {"enum",
       R"({"mode":{"type":"string","enum":["a","b"]}})",
       R"({"mode":"c"})",
       {R"(spec.mode: Unsupported value: "c": supported values: "a", "b" [FieldValueNotSupported])"}},
      {"enum of numbers",
       R"({"level":{"type":"number","enum":[1,2.5]}})",
       R"({"level":3})",
       {R"(spec.level: Unsupported value: 3: supported values: "1", "2.5" [FieldValueNotSupported])"}},
      {"enum compares numbers by value", R"({"level":{"type":"number","enum":[1,2.5]}})", R"({"level":1.0})", {}},
      {"enum of objects",
       R"({"x":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"enum":[{"a":1}]}})",
       R"({"x":{"a":2,"b":"c"}})",
       {R"(spec.x: Unsupported value: map[string]interface {}{"a":2, "b":"c"}: supported values: "{\"a\":1}" [FieldValueNotSupported])"}},
      {"null against an enum",
       R"({"mode":{"type":"string","nullable":true,"enum":["a"]}})",
       R"({"mode":null})",
       {R"(spec.mode: Unsupported value: "null": supported values: "a" [FieldValueNotSupported])"}},
      {"minimum and maximum",
       R"({"low":{"type":"integer","minimum":1},"high":{"type":"integer","maximum":10}})",
       R"({"low":0,"high":11})",
       {"spec.low: Invalid value: 0: spec.low in body should be greater than or equal to 1 [FieldValueInvalid]",
        "spec.high: Invalid value: 11: spec.high in body should be less than or equal to 10 [FieldValueInvalid]"}},
      {"exclusive bounds",
       R"({"a":{"type":"number","minimum":0,"exclusiveMinimum":true},"b":{"type":"number","maximum":1,"exclusiveMaximum":true}})",
       R"({"a":0.0,"b":1.0})",
       {"spec.a: Invalid value: 0: spec.a in body should be greater than 0 [FieldValueInvalid]",
        "spec.b: Invalid value: 1: spec.b in body should be less than 1 [FieldValueInvalid]"}},
      {"bounds of a float",
       R"({"cpu":{"type":"number","maximum":1.5,"minimum":0.000015}})",
       R"({"cpu":2.25,"other":1})",
       {"spec.cpu: Invalid value: 2.25: spec.cpu in body should be less than or equal to 1.5 [FieldValueInvalid]"}},
      {"small and large floats print as Go's %v",
       R"({"a":{"type":"number","minimum":0.00001},"b":{"type":"number","maximum":1000000}})",
       R"({"a":0.000001,"b":12345678.5})",
       {"spec.a: Invalid value: 1e-06: spec.a in body should be greater than or equal to 1e-05 [FieldValueInvalid]",
        "spec.b: Invalid value: 1.23456785e+07: spec.b in body should be less than or equal to 1e+06 "
        "[FieldValueInvalid]"}},
      // kube-openapi compares an int64 with int64(bound).
      {"an integer against a fractional bound",
       R"({"n":{"type":"integer","maximum":10.5}})",
       R"({"n":11})",
       {"spec.n: Invalid value: 11: spec.n in body should be less than or equal to 10 [FieldValueInvalid]"}},
      {"multipleOf",
       R"({"n":{"type":"integer","multipleOf":5},"f":{"type":"number","multipleOf":0.5}})",
       R"({"n":7,"f":0.75})",
       {"spec.n: Invalid value: 7: spec.n in body should be a multiple of 5 [FieldValueInvalid]",
        "spec.f: Invalid value: 0.75: spec.f in body should be a multiple of 0.5 [FieldValueInvalid]"}},
      {"maxLength counts characters",
       R"({"name":{"type":"string","maxLength":3},"ok":{"type":"string","maxLength":3}})",
       R"({"name":"héllo","ok":"héé"})",
       {"spec.name: Too long: may not be more than 3 bytes [FieldValueTooLong]"}},
      {"minLength",
       R"({"name":{"type":"string","minLength":3}})",
       R"({"name":"ab"})",
       {R"(spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long [FieldValueInvalid])"}},
      {"pattern",
       R"({"name":{"type":"string","pattern":"^[a-z]+$"}})",
       R"({"name":"ABC"})",
       {R"(spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$' [FieldValueInvalid])"}},
      {"only the first failing string check",
       R"({"name":{"type":"string","maxLength":2,"pattern":"^[a-z]+$"}})",
       R"({"name":"ABC"})",
       {"spec.name: Too long: may not be more than 2 bytes [FieldValueTooLong]"}},
      {"a pattern in RE2's syntax only is not checked",
       R"({"name":{"type":"string","pattern":"(?i)^[a-z]+$"}})",
       R"({"name":"A1"})",
       {}},
      {"minItems and maxItems",
       R"({"few":{"type":"array","items":{"type":"string"},"minItems":2},"many":{"type":"array","items":{"type":"string"},"maxItems":3}})",
       R"({"few":["a"],"many":["a","b","c","d"]})",
       {"spec.few: Invalid value: 1: spec.few in body should have at least 2 items [FieldValueInvalid]",
        "spec.many: Too many: 4: must have at most 3 items [FieldValueTooMany]"}},
      {"minProperties and maxProperties",
       R"({"few":{"type":"object","additionalProperties":{"type":"string"},"minProperties":1},
           "many":{"type":"object","additionalProperties":{"type":"string"},"maxProperties":1}})",
       R"({"few":{},"many":{"a":"1","b":2}})",
       {"spec.few: Invalid value: 0: spec.few in body should have at least 1 properties [FieldValueInvalid]",
        "spec.many: Too many: 2: must have at most 1 item [FieldValueTooMany]"}},
      // The server strips formats it does not validate, int32 and int64 among them.
      {"int32 and int64 formats are not range checked",
       R"({"a":{"type":"integer","format":"int32"},"b":{"type":"integer","format":"int64"}})",
       R"({"a":3000000000,"b":18446744073709551615})",
       {R"(spec.b: Invalid value: "number": spec.b in body must be of type integer: "number" [FieldValueTypeInvalid])"}},
      {"uniqueItems",
       R"({"list":{"type":"array","items":{"type":"integer"},"uniqueItems":true}})",
       R"({"list":[1,2,1,2]})",
       {R"(spec.list: Invalid value: "": spec.list in body shouldn't contain duplicates [FieldValueInvalid])"}},
      {"list-type set: each duplicate once, where it repeats",
       R"({"tags":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}})",
       R"({"tags":["a","b","a","a","b"]})",
       {R"(spec.tags[2]: Duplicate value: "a" [FieldValueDuplicate])",
        R"(spec.tags[4]: Duplicate value: "b" [FieldValueDuplicate])"}},
      {"list-type set of objects",
       R"({"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-map-type":"atomic",
           "properties":{"a":{"type":"number"}}}}})",
       R"({"s":[{"a":1},{"a":1.0}]})",
       {R"(spec.s[1]: Duplicate value: map[string]interface {}{"a":1} [FieldValueDuplicate])"}},
      {"list-type map",
       ports,
       R"({"ports":[{"name":"http","port":80},{"name":"http","port":8080},{"port":1},{}]})",
       {R"(spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"} [FieldValueDuplicate])",
        R"(spec.ports[3]: Duplicate value: map[string]interface {}{} [FieldValueDuplicate])"}},
      {"list-type map with two keys",
       R"({"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","protocol"],
           "items":{"type":"object","properties":{"name":{"type":"string"},"protocol":{"type":"string"}}}}})",
       R"({"ports":[{"name":"a","protocol":"TCP"},{"name":"a","protocol":"UDP"},{"name":"a","protocol":"TCP"}]})",
       {R"(spec.ports[2]: Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"} [FieldValueDuplicate])"}},
      {"list-type map items must be objects",
       ports,
       R"({"ports":[{"name":"a"},"b"]})",
       {R"(spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type object: "string" [FieldValueTypeInvalid])",
        R"(spec.ports[1]: Invalid value: "b": must be an object for an array of list-type map [FieldValueInvalid])"}},
      {"allOf",
       R"({"n":{"type":"integer","allOf":[{"minimum":1},{"maximum":5}]}})",
       R"({"n":7})",
       {"spec.n: Invalid value: 7: spec.n in body should be less than or equal to 5 [FieldValueInvalid]",
        R"(: Invalid value: "": "spec.n" must validate all the schemas (allOf) [FieldValueInvalid])"}},
      {"anyOf, with the closest clause's errors",
       R"({"n":{"type":"integer","anyOf":[{"minimum":10},{"maximum":0}]}})",
       R"({"n":5})",
       {R"(: Invalid value: "": "spec.n" must validate at least one schema (anyOf) [FieldValueInvalid])",
        "spec.n: Invalid value: 5: spec.n in body should be greater than or equal to 10 [FieldValueInvalid]"}},
      {"anyOf holds", R"({"n":{"type":"integer","anyOf":[{"minimum":10},{"maximum":0}]}})", R"({"n":-1})", {}},
      {"oneOf, none holds",
       R"({"x":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}})",
       R"({"x":{}})",
       {R"(: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found none valid [FieldValueInvalid])",
        "spec.x.a: Required value [FieldValueRequired]"}},
      {"oneOf, two hold",
       R"({"x":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}})",
       R"({"x":{"a":"1","b":"2"}})",
       {R"(: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives [FieldValueInvalid])"}},
      {"not",
       R"({"x":{"type":"object","properties":{"a":{"type":"string"}},"not":{"required":["a"]}}})",
       R"({"x":{"a":"1"}})",
       {R"(: Invalid value: "": "spec.x" must not validate the schema (not) [FieldValueInvalid])"}},
      {"x-kubernetes-int-or-string",
       R"({"port":{"x-kubernetes-int-or-string":true},"p2":{"x-kubernetes-int-or-string":true}})",
       R"({"port":true,"p2":"http"})",
       {R"(spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean" [FieldValueTypeInvalid])"}},
      {"x-kubernetes-int-or-string with its anyOf",
       R"({"port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}})",
       R"({"port":1.5})",
       {R"(spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number" [FieldValueTypeInvalid])",
        R"(: Invalid value: "": "spec.port" must validate at least one schema (anyOf) [FieldValueInvalid])",
        R"(spec.port: Invalid value: "number": spec.port in body must be of type integer: "number" [FieldValueTypeInvalid])"}},
      {"paths through lists",
       R"({"list":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}})",
       R"({"list":[{"name":"a"},{"name":"b"},{"name":3}]})",
       {R"(spec.list[2].name: Invalid value: "integer": spec.list[2].name in body must be of type string: "integer" [FieldValueTypeInvalid])"}},
      {"keys that are not words in brackets",
       R"({"labels":{"type":"object","additionalProperties":{"type":"string"}}})",
       R"({"labels":{"app":"a","example.com/tier":1}})",
       {R"(spec.labels[example.com/tier]: Invalid value: "integer": spec.labels[example.com/tier] in body must be of type string: "integer" [FieldValueTypeInvalid])"}},
      {"additionalProperties false",
       R"({"x":{"type":"object","additionalProperties":false}})",
       R"({"x":{"a":1}})",
       {R"(spec.x: Invalid value: "a": spec.x.a in body is a forbidden property [FieldValueInvalid])"}},
      {"a field with an empty schema takes anything",
       R"({"any":{"x-kubernetes-preserve-unknown-fields":true}})",
       R"({"any":{"deep":[1,"x",{"y":null}]}})",
       {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json::Document object = ParseOrFail(Resource(c.spec));
    const StructuralCheck check = Check(SpecSchema(c.properties, c.extra), object);
    EXPECT_EQ(Render(check.violations), c.want);
  }
}

TEST(StructuralSchemaTest, ValidatesTheRootAndMetadata) {
  struct Case {
    std::string name;
    std::string schema;
    std::string object;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"metadata against its schema",
       R"({"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":5}}}}})",
       R"({"apiVersion":"x/v1","kind":"X","metadata":{"name":"toolong"}})",
       {"metadata.name: Too long: may not be more than 5 bytes [FieldValueTooLong]"}},
      {"required at the root",
       R"({"type":"object","required":["spec"],"properties":{"spec":{"type":"object"}}})",
       R"({"apiVersion":"x/v1","kind":"X","metadata":{"name":"a"}})",
       {"spec: Required value [FieldValueRequired]"}},
      {"a root that is not an object",
       R"({"type":"object"})",
       R"([1])",
       {R"(: Invalid value: "array":  in body must be of type object: "array" [FieldValueTypeInvalid])"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json::Document object = ParseOrFail(c.object);
    EXPECT_EQ(Render(Check(c.schema, object).violations), c.want);
  }
}

TEST(StructuralSchemaTest, SchemaProblems) {
  struct Case {
    std::string name;
    std::string schema;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"a usable schema",
       R"({"type":"object","properties":{
          "metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":10}}},
          "spec":{"type":"object","required":["a"],"properties":{
            "a":{"type":"string","enum":["x"],"pattern":"^x$"},
            "port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
            "list":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
                    "items":{"type":"object","properties":{"name":{"type":"string"}}}},
            "labels":{"type":"object","additionalProperties":{"type":"string"}},
            "any":{"x-kubernetes-preserve-unknown-fields":true},
            "n":{"type":"integer","minimum":0,"allOf":[{"maximum":5}],"not":{"enum":[3]}}}}}})",
       {}},
      {"not an object", R"("x")", {R"(s: Invalid value: "string": must be a schema (a JSON object))"}},
      {"a type that is not one of the six",
       R"({"type":"object","properties":{"a":{"type":"foo"},"b":{"type":"null"}}})",
       {R"(s.properties[a].type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string")",
        R"(s.properties[b].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string")",
        "s.properties[b].type: Forbidden: type cannot be set to null, use nullable as an alternative"}},
      {"properties that are not schemas",
       R"({"type":"object","properties":{"a":5,"b":{"type":"object","properties":[]}}})",
       {R"(s.properties[a]: Invalid value: "integer": must be a schema (a JSON object))",
        "s.properties[b].properties: Invalid value: []interface {}{}: must be an object"}},
      {"keywords of the wrong type",
       R"({"type":"object","properties":{"a":{"type":"string","minLength":"3","required":[1],"nullable":"yes"}}})",
       {R"(s.properties[a].minLength: Invalid value: "3": must be an integer)",
        "s.properties[a].required: Invalid value: []interface {}{1}: must be a list of strings",
        R"(s.properties[a].nullable: Invalid value: "yes": must be a boolean)"}},
      {"a field without a type",
       R"({"type":"object","properties":{"a":{},"l":{"type":"array","items":{}}}})",
       {"s.properties[a].type: Required value: must not be empty for specified object fields",
        "s.properties[l].items.type: Required value: must not be empty for specified array items"}},
      {"a list without items",
       R"({"type":"object","properties":{"l":{"type":"array"}}})",
       {"s.properties[l].items: Required value: must be specified"}},
      {"the root",
       R"({"type":"string","nullable":true,"additionalProperties":{"type":"string"}})",
       {"s.additionalProperties: Forbidden: must not be used at the root",
        "s.nullable: Forbidden: nullable cannot be true at the root",
        R"(s.type: Invalid value: "string": must be object at the root)"}},
      {"types and extensions inside allOf, anyOf, oneOf and not",
       R"({"type":"object","allOf":[{"type":"string"}],"anyOf":[{"nullable":true}],
           "oneOf":[{"x-kubernetes-preserve-unknown-fields":true}],"not":{"properties":{"metadata":{}}}})",
       {"s.allOf[0].type: Forbidden: must be empty to be structural",
        "s.anyOf[0].nullable: Forbidden: must be false to be structural",
        "s.oneOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        "s.not.properties[metadata]: Forbidden: must not be specified in a nested context"}},
      {"unsupported keywords",
       R"({"type":"object","$ref":"#/definitions/a","patternProperties":{"x":{}},"definitions":{},"properties":{
           "l":{"type":"array","items":[{"type":"string"}],"uniqueItems":true}}})",
       {"s.$ref: Forbidden: $ref is not supported",
        "s.patternProperties: Forbidden: patternProperties is not supported",
        "s.properties[l].items: Forbidden: items must be a schema object and not an array",
        "s.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity "
        "becomes quadratic",
        "s.properties[l].items: Required value: must be specified"}},
      {"properties beside additionalProperties",
       R"({"type":"object","properties":{"m":{"type":"object","properties":{"a":{"type":"string"}},
           "additionalProperties":{"type":"string"}}}})",
       {"s.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"}},
      {"x-kubernetes-list-type",
       R"({"type":"object","properties":{
           "m":{"type":"array","x-kubernetes-list-type":"map","items":{"type":"object","properties":{"name":{"type":"string"}}}},
           "k":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["id"],
                "items":{"type":"object","properties":{"name":{"type":"string"}}}},
           "o":{"type":"object","x-kubernetes-list-type":"bag"}}})",
       {"s.properties[m].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is "
        "map",
        R"(s.properties[k].x-kubernetes-list-map-keys: Invalid value: []interface {}{"id"}: entries must all be names of item properties)",
        R"(s.properties[o].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified)",
        R"(s.properties[o].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map")"}},
      {"metadata at the root restricts name and generateName only",
       R"({"type":"object","properties":{"metadata":{"type":"object","properties":{"labels":{"type":"object"}}},
           "kind":{"type":"integer"}}})",
       {R"(s.properties[kind].type: Invalid value: "integer": must be string)",
        "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata "
        "is implicitly specified"}},
      {"x-kubernetes-embedded-resource",
       R"({"type":"object","properties":{"t":{"x-kubernetes-embedded-resource":true},
           "i":{"type":"object","x-kubernetes-int-or-string":true,"x-kubernetes-preserve-unknown-fields":false}}})",
       {"s.properties[t].type: Required value: must be object if x-kubernetes-embedded-resource is true",
        "s.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true "
        "without x-kubernetes-preserve-unknown-fields",
        "s.properties[i].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(StructuralSchemaProblems(ParseOrFail(c.schema), "s"), c.want);
  }
}

// Hostile input: objects and schemas as deep as the parser allows, and deeper ones built by hand,
// must neither crash nor recurse past json::kMaxDepth.
TEST(StructuralSchemaTest, SurvivesDeepObjects) {
  const int depth = json::kMaxDepth - 10;
  std::string deep = R"({"apiVersion":"x/v1","kind":"X","metadata":{},"spec":)";
  for (int i = 0; i < depth; ++i) deep += R"({"a":)";
  deep += "1";
  deep += std::string(depth + 1, '}');

  json::Document kept = ParseOrFail(deep);
  StructuralCheck check = Check(R"({"type":"object","x-kubernetes-preserve-unknown-fields":true})", kept);
  EXPECT_TRUE(check.pruned.empty());
  EXPECT_TRUE(check.violations.empty());

  json::Document pruned = ParseOrFail(deep);
  check = Check(SpecSchema("{}"), pruned);
  EXPECT_EQ(check.pruned, std::vector<std::string>{"spec.a"});
  EXPECT_TRUE(check.violations.empty());

  // A schema that follows the object down (half the parser's depth: each level is two).
  const int levels = json::kMaxDepth / 2 - 5;
  std::string schema, object;
  for (int i = 0; i < levels; ++i) {
    schema += R"({"type":"object","properties":{"a":)";
    object += R"({"a":)";
  }
  schema += R"({"type":"string"})" + std::string(2 * levels, '}');
  object += "1" + std::string(levels, '}');
  json::Document matched = ParseOrFail(object);
  check = Check(schema, matched);
  ASSERT_EQ(check.violations.size(), 1u);
  EXPECT_EQ(check.violations[0].reason, "FieldValueTypeInvalid");
  EXPECT_EQ(check.violations[0].field.size(), 2u * levels - 1);  // "a.a.....a"
  EXPECT_TRUE(StructuralSchemaProblems(ParseOrFail(schema), "s").empty());
}

TEST(StructuralSchemaTest, StopsAtTheDepthLimitOfValuesBuiltByHand) {
  const int depth = 3 * json::kMaxDepth;
  json::Document schema;
  schema.SetObject();
  json::Document object;
  object.SetObject();
  json::Value* s = &json::Child(schema, "properties", schema.GetAllocator());
  json::Value* o = &object;
  json::Set(schema, "type", json::MakeString("object", schema.GetAllocator()), schema.GetAllocator());
  for (int i = 0; i < depth; ++i) {
    json::Value& next = json::Child(*s, "a", schema.GetAllocator());
    json::Set(next, "type", json::MakeString("object", schema.GetAllocator()), schema.GetAllocator());
    s = &json::Child(next, "properties", schema.GetAllocator());
    o = &json::Child(*o, "a", object.GetAllocator());
    json::Set(*o, "b", json::Value(1), object.GetAllocator());
  }
  const StructuralCheck check = PruneAndValidate(object, object.GetAllocator(), schema);
  ASSERT_FALSE(check.violations.empty());
  EXPECT_NE(check.violations.back().message.find("nesting deeper than"), std::string::npos);
  const std::vector<std::string> problems = StructuralSchemaProblems(schema, "s");
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.back().find("nesting deeper than"), std::string::npos);
}

TEST(StructuralSchemaTest, SurvivesHostilePatternsAndKeywords) {
  struct Case {
    std::string name;
    std::string properties;
    std::string spec;
    size_t violations;
  };
  const std::string long_value = std::string(50000, 'a');
  const std::vector<Case> cases = {
      // A backtracking matcher would recurse once per character here.
      {"a long value against an alternation", R"({"s":{"type":"string","pattern":"^(a|aa)*b$"}})",
       R"({"s":")" + long_value + R"("})", 1},
      {"a repeat count RE2 refuses is not compiled", R"({"s":{"type":"string","pattern":"^(a{2000}){2000}$"}})",
       R"({"s":"a"})", 0},
      {"a pattern too long to compile safely",
       R"({"s":{"type":"string","pattern":")" + std::string(100000, 'a') + R"("}})", R"({"s":"b"})", 0},
      {"keywords of every wrong type",
       R"({"x":{"type":5,"properties":[1],"items":"x","required":"a","enum":{},"minLength":"3","allOf":{},
           "anyOf":[1,null],"oneOf":"x","not":[],"x-kubernetes-list-type":7,"additionalProperties":"x",
           "x-kubernetes-list-map-keys":{},"maximum":"9","pattern":5}})",
       R"({"x":{"a":[1,{"b":2}],"c":"d"}})", 0},
      {"list-map keys of every wrong type",
       R"({"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":[1,null,"k"],
           "items":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}})",
       R"({"l":[{"k":{"deep":[1]}},{"k":{"deep":[1]}},null,null]})", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json::Document object = ParseOrFail(Resource(c.spec));
    const auto start = std::chrono::steady_clock::now();
    const StructuralCheck check = Check(SpecSchema(c.properties), object);
    EXPECT_EQ(check.violations.size(), c.violations) << ::testing::PrintToString(Render(check.violations));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  }
}

// Clauses re-check the same values: the work is bounded, and what was skipped is said.
TEST(StructuralSchemaTest, BoundsTheWorkOfAHostileSchema) {
  std::string clauses;
  for (int i = 0; i < 20; ++i) clauses += std::string(i ? "," : "") + R"({"minimum":0})";
  const std::string properties =
      R"({"grid":{"type":"array","items":{"type":"array","items":{"type":"integer","allOf":[)" + clauses + "]}}}}";
  std::string row = "[0";
  for (int i = 1; i < 300; ++i) row += ",0";
  row += "]";
  std::string grid = "[" + row;
  for (int i = 1; i < 300; ++i) grid += "," + row;
  grid += "]";
  json::Document object = ParseOrFail(Resource(R"({"grid":)" + grid + "}"));
  const auto start = std::chrono::steady_clock::now();
  const StructuralCheck check = Check(SpecSchema(properties), object);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  ASSERT_EQ(check.violations.size(), 1u);
  EXPECT_EQ(check.violations[0].field, "");
  EXPECT_EQ(check.violations[0].message,
            R"(Invalid value: "": the schema asks for more than 1048576 checks of this object: not all were made)");
}

}  // namespace
}  // namespace kubesched::api
