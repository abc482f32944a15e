#pragma once
// The objects of `kubesched apiserver -f MANIFEST...`, as JSON documents to create through the
// store. The manifests are first loaded by api::LoadManifestSources, which checks them as
// `kubectl apply -f` would (and reports the file, document, object, field and line of any
// problem); their documents are then decoded again, with the codec, into JSON with every field.
//
// ManifestObjectsJson is the one function to swap once the loader hands out each object's full
// JSON (then the second decoding goes away).

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "api/json.h"
#include "api/manifest.h"

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
//! Why manifests were refused: the message names the place; `field` is the field path of an
//! object the loader's checks refused ("" when the text itself could not be decoded).
struct ManifestProblem {
  std::string message;
  std::string field;
};

//! The same from texts already read (the web UI's pasted manifests): each source's name is the
//! file name its messages give. `check`: the loader's checks first (as `kubectl apply`); without,
//! the documents are only decoded (as `kubectl delete -f`, which needs kinds and names alone).
std::expected<ManifestObjects, ManifestProblem> ManifestObjectsFromSources(
    const std::vector<api::ManifestSource>& sources, bool check = true);

}  // namespace kubesched::server
