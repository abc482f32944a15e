// The loader's decoding stage: one document's text to its DOM (JSON codec or YAML), `kind: List`
// unwrapped, each object's kind checked, its fields checked against the schema (kubectl's
// --validate), then decoded and validated (api/decode.h). Errors and warnings get their line
// numbers here, from the document's text.

#include <algorithm>
#include <array>

#include "api/decode_internal.h"
#include "api/loader_internal.h"
#include "api/schema.h"

namespace kubesched::api::loader {
namespace {

constexpr std::string_view kSchedulerConfigurationKind = "KubeSchedulerConfiguration";
constexpr std::string_view kSchedulerConfigurationGroup = "kubescheduler.config.k8s.io/";

using decode::Failure;
using decode::MapView;

// A schema issue under FieldValidation::kStrict: the first one stops the document.
struct SchemaFailure {
  FieldIssue issue;
};

struct Abort {};  // the document's error is already set

std::string PeekString(const json::Value& obj, const decode::Context& ctx, std::string_view a,
                       std::string_view b = {}) {
  const json::Value* v = json::Find(obj, a);
  if (v != nullptr && !b.empty()) v = json::Find(*v, b);
  if (v == nullptr || v->IsObject() || v->IsArray() || v->IsNull()) return "";
  return decode::ScalarText(*v, ctx);
}

// `default_namespace`: LoadOptions::namespace_ ("" for "default").
std::string PeekIdentity(const json::Value& obj, const decode::Context& ctx, const std::string& default_namespace) {
  const std::string kind = PeekString(obj, ctx, "kind");
  if (kind.empty()) return "";
  ObjectMeta meta;
  meta.name = PeekString(obj, ctx, "metadata", "name");
  meta.generate_name = PeekString(obj, ctx, "metadata", "generateName");
  meta.namespace_ = PeekString(obj, ctx, "metadata", "namespace");
  const KindInfo* info = LookupKind(kind);
  const bool namespaced = info != nullptr && info->namespaced;
  if (namespaced && meta.namespace_.empty()) {
    meta.namespace_ = default_namespace.empty() ? std::string(kNamespaceDefault) : default_namespace;
  }
  return Identity(kind, meta, namespaced);
}

yaml::SourcePath Concat(const yaml::SourcePath& a, const yaml::SourcePath& b) {
  yaml::SourcePath out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

class DocumentLoader {
 public:
  DocumentLoader(std::shared_ptr<SourceDocument> source, const std::string& file, int index, FieldValidation validation,
                 const std::string& namespace_)
      : source_(std::move(source)),
        file_(file),
        index_(index),
        validation_(validation),
        namespace_(namespace_),
        ctx_{&source_->texts} {}

  ParsedDocument Run() {
    json::Value& root = source_->dom;
    if (root.IsNull()) return std::move(out_);  // an empty document
    const Origin origin{file_, index_, "", source_, {}};
    const std::string identity = PeekIdentity(root, ctx_, namespace_);
    Guard(origin, identity, [&] {
      if (!root.IsObject()) {
        decode::Fail(&root, "", "expected an object with apiVersion and kind, got " + decode::Describe(&root, ctx_));
      }
      const std::string kind = PeekString(root, ctx_, "kind");
      // kind: List, and typed lists such as PodList or ServiceList (what `kubectl get -o yaml` prints).
      const json::Value* items = json::Find(root, "items");
      const bool typed_list =
          kind.ends_with("List") && (LookupKind(kind.substr(0, kind.size() - 4)) != nullptr || decode::Present(items));
      if (kind == "List" || typed_list) {
        if (!decode::Present(items)) {
          decode::Fail(items != nullptr ? items : &root, "items", "required field is missing", kFieldValueRequired);
        }
        if (!items->IsArray()) decode::Fail(items, "items", "expected a list, got " + decode::Describe(items, ctx_));
        const uint32_t member = static_cast<uint32_t>(root.FindMember("items") - root.MemberBegin());
        json::Value& list = *json::Find(root, "items");
        for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
          const Origin item_origin{file_,
                                   index_,
                                   decode::IndexPath("items", i),
                                   source_,
                                   {{yaml::PathStep::Kind::kValue, member}, {yaml::PathStep::Kind::kElement, i}}};
          // Errors inside an item name the item, not the List.
          const std::string item_identity = PeekIdentity(list[i], ctx_, namespace_);
          if (!Guard(item_origin, item_identity, [&] { Read(list[i], item_origin); })) throw Abort{};
        }
        return;
      }
      Read(root, origin);
    });
    return std::move(out_);
  }

 private:
  template <typename F>
  bool Guard(const Origin& origin, const std::string& identity, F&& f) {
    try {
      f();
      return true;
    } catch (const Abort&) {
      return false;
    } catch (const Failure& e) {
      int line = 0;
      if (auto path = yaml::PathTo(source_->dom, e.at, e.at_key)) line = source_->LineOf(*path);
      out_.error = LoadError{origin.file, origin.document, identity, e.error.field, e.error.message, line};
      return false;
    } catch (const SchemaFailure& e) {
      out_.error = LoadError{origin.file,  origin.document, identity,
                             e.issue.path, e.issue.message, source_->LineOf(Concat(origin.path, e.issue.at))};
      return false;
    }
  }

  void Read(json::Value& node, const Origin& origin) {
    const MapView obj(&node, decode::Path(origin.prefix), ctx_);
    std::string kind;
    const KindInfo* info = decode::CheckKind(obj, kind);
    if (info == nullptr) {
      if (kind == kSchedulerConfigurationKind &&
          PeekString(node, ctx_, "apiVersion").starts_with(kSchedulerConfigurationGroup)) {
        // A scenario's configuration: its own text when it is the whole document (the loader
        // reports its lines), else the item as JSON.
        std::string source = file_ + " document " + std::to_string(index_);
        if (!origin.prefix.empty()) source += " " + origin.prefix;
        out_.configurations.push_back({std::move(source), origin.prefix.empty() ? source_->text : json::Encode(node)});
        return;
      }
      out_.skipped_kinds.push_back(std::move(kind));
      return;
    }
    if (info->namespaced && !namespace_.empty()) ApplyNamespace(node, obj);
    // Unknown fields and duplicate keys, as kubectl's --validate (the API server's field
    // validation) reports them, before the values are read (as the strict decoder does). A value
    // of the wrong type is an error whatever the mode: the API server cannot decode it.
    issues_.clear();
    CheckFields(node, info->SchemaName(), origin.prefix, issues_, &source_->texts);
    if (validation_ == FieldValidation::kStrict && !issues_.empty()) throw SchemaFailure{std::move(issues_.front())};
    for (FieldIssue& issue : issues_) {
      if (issue.kind == FieldIssue::Kind::kType) throw SchemaFailure{std::move(issue)};
    }
    if (validation_ != FieldValidation::kIgnore) {
      if (!issues_.empty()) {
        std::vector<yaml::SourcePath> paths;
        for (const FieldIssue& issue : issues_) paths.push_back(Concat(origin.path, issue.at));
        const std::vector<int> lines = yaml::LinesOf(source_->text, paths);
        const std::string identity = PeekIdentity(node, ctx_, namespace_);
        for (size_t i = 0; i < issues_.size(); ++i) {
          out_.warnings.push_back(LoadError{origin.file, origin.document, identity, std::move(issues_[i].path),
                                            std::move(issues_[i].message),
                                            lines[i] > 0 ? lines[i] + source_->first_line : 0});
        }
      }
    }
    Entry e;
    e.origin = origin;
    e.kind = info;
    e.object = decode::DecodeChecked(obj, *info);
    e.meta = &MetaOf(e.object);
    e.dom = &node;
    out_.entries.push_back(std::move(e));
  }

  // kubectl -n: the namespace of an object that names none; naming another is kubectl's error.
  void ApplyNamespace(json::Value& node, const MapView& obj) {
    json::Value* meta = json::Find(node, "metadata");
    if (meta == nullptr || !meta->IsObject()) return;  // decoding reports it
    const MapView meta_view = obj.Map("metadata");
    const json::Value* ns = json::Find(*meta, "namespace");
    if (ns != nullptr && !ns->IsNull()) {
      const std::string given = decode::ScalarText(*ns, ctx_);
      if (!given.empty() && given != namespace_) {
        decode::Fail(meta_view.At("namespace"), meta_view.PathOf("namespace"),
                     "the namespace from the provided object " + util::GoQuote(given) +
                         " does not match the namespace " + util::GoQuote(namespace_) +
                         ". You must pass '--namespace=" + given + "' to perform this operation.");
      }
    }
    json::Set(*meta, "namespace", json::MakeString(namespace_, source_->dom.GetAllocator()),
              source_->dom.GetAllocator());
  }

  std::shared_ptr<SourceDocument> source_;
  const std::string& file_;
  int index_;
  FieldValidation validation_;
  const std::string& namespace_;  // LoadOptions::namespace_
  decode::Context ctx_;
  ParsedDocument out_;
  std::vector<FieldIssue> issues_;
};

}  // namespace

int SourceDocument::LineOf(const yaml::SourcePath& path) const {
  const std::array<yaml::SourcePath, 1> paths{path};
  const int line = yaml::LinesOf(text, paths).front();
  return line > 0 ? line + first_line : 0;
}

std::string Identity(std::string_view kind, const ObjectMeta& meta, bool namespaced) {
  std::string name = meta.name.empty() ? meta.generate_name : meta.name;
  if (name.empty()) return std::string(kind);
  if (namespaced) return std::string(kind) + " " + meta.namespace_ + "/" + name;
  return std::string(kind) + " " + name;
}

ParsedDocument LoadDocument(std::shared_ptr<SourceDocument> source, bool is_json, const std::string& file, int index,
                            const LoadOptions& options) {
  if (is_json) {
    // Parsed already: the caller tried JSON first.
  } else if (auto parsed = yaml::Parse(source->text, source->dom, &source->texts); !parsed) {
    ParsedDocument out;
    const int line = parsed.error().line;
    out.error = LoadError{
        file, index, "", "", "YAML syntax error: " + parsed.error().message, line > 0 ? line + source->first_line : 0};
    return out;
  }
  return DocumentLoader(std::move(source), file, index, options.field_validation, options.namespace_).Run();
}

}  // namespace kubesched::api::loader
