#pragma once
// The objects of `kubesched apiserver -f MANIFEST...`, as JSON documents to create through the
// store. The manifests are first loaded by api::LoadManifests, which checks them as `kubectl
// apply -f` would (and reports the file, document, object, field and line of any problem);
// their objects are then read again as JSON, every field kept.
//
// ManifestObjectsJson is the one function to swap once the codec gives each loaded object its
// full JSON (then the second reading goes away).

#include <expected>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "api/json.h"

namespace kubesched::server {

struct ManifestObject {
  std::string source;       //!< "file.yaml: document 3", for messages
  std::string api_version;  //!< "apps/v1"
  std::string kind;         //!< "Deployment"
  std::unique_ptr<api::json::Document> json;
};

struct ManifestObjects {
  std::vector<ManifestObject> objects;  //!< in manifest order, List items expanded
  std::vector<std::string> warnings;    //!< the loader's (kinds skipped, fields warned about)
};

//! Reads `paths` as `kubectl apply -f` does ("-" is standard input, a directory its *.yaml,
//! *.yml and *.json files); an error names the problem's place.
std::expected<ManifestObjects, std::string> ManifestObjectsJson(const std::vector<std::string>& paths);

//! One YAML node as JSON: plain scalars typed as YAML 1.2's core schema reads them (true/false,
//! null and ~, integers, floats; everything else, and every quoted scalar, a string).
void YamlToJson(const YAML::Node& node, api::json::Value& out, api::json::Allocator& alloc);

}  // namespace kubesched::server
