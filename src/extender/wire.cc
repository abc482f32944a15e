#include "extender/wire.h"

#include <charconv>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/field_path.h"
#include "api/json.h"
#include "api/json_quote.h"
#include "api/json_writer.h"

namespace kubesched::extender {
namespace {

using api::json::Value;

// ---------------------------------------------------------------------------------------------
// Encoding

// The victims of either kind of map, for code shared by both.
const std::vector<PodPtr>& Pods(const Victims& v) { return v.pods; }
const std::vector<std::string>& Pods(const MetaVictims& v) { return v.pod_uids; }
std::vector<PodPtr>& Pods(Victims& v) { return v.pods; }
std::vector<std::string>& Pods(MetaVictims& v) { return v.pod_uids; }

// Compact JSON into one string, written with the codec's writer (api::json::StringWriter):
// strings quoted as Go quotes them, pods and nodes spliced in from their kept JSON (a request
// carries up to thousands of nodes every cycle).
class Writer {
 public:
  explicit Writer(std::string& out) : json_(out) {}

  void StartObject() { json_.StartObject(); }
  void EndObject() { json_.EndObject(); }
  void StartArray() { json_.StartArray(); }
  void EndArray() { json_.EndArray(); }
  //! A Go field name: plain ASCII, which every quoting writes alike.
  void Field(std::string_view name) { json_.Key(name); }
  //! A map key (a node name), escaped.
  void Key(std::string_view key) { json_.RawKey(GoQuoted(key)); }
  void String(std::string_view s) { json_.RawValue(GoQuoted(s)); }
  void Int(int64_t v) { json_.Int64(v); }
  void Null() { json_.Null(); }
  void Pod(const PodPtr& pod) {
    if (pod == nullptr) return Null();
    if (pod->json) return json_.RawValue(*pod->json);
    std::string encoded;
    api::EncodePodTo(*pod, encoded);
    json_.RawValue(encoded);
  }
  void Node(const NodePtr& node) {
    if (node == nullptr) return Null();
    if (node->json) return json_.RawValue(*node->json);
    std::string encoded;
    api::EncodeNodeTo(*node, encoded);
    json_.RawValue(encoded);
  }

  // Field and value together, for the shapes every type shares.
  void StringField(std::string_view name, std::string_view value) {
    Field(name);
    String(value);
  }
  void Strings(std::string_view name, const std::optional<std::vector<std::string>>& values) {
    Field(name);
    if (!values) return Null();
    StartArray();
    for (const std::string& v : *values) String(v);
    EndArray();
  }
  //! A v1.NodeList: its ListMeta is a struct, which omitempty does not drop, so `"metadata":{}`.
  void NodeList(std::string_view name, const std::optional<std::vector<NodePtr>>& nodes) {
    Field(name);
    if (!nodes) return Null();
    StartObject();
    Field("metadata");
    StartObject();
    EndObject();
    Field("items");
    StartArray();
    for (const NodePtr& n : *nodes) Node(n);
    EndArray();
    EndObject();
  }
  void FailedNodes(std::string_view name, const std::optional<FailedNodesMap>& failed) {
    Field(name);
    if (!failed) return Null();
    StartObject();
    for (const auto& [node, reason] : *failed) {
      Key(node);
      String(reason);
    }
    EndObject();
  }
  //! A map of node name to Victims or MetaVictims (`{"Pods":[...],"NumPDBViolations":n}`), each
  //! victim written by `pod(writer, victim)`.
  template <typename Map, typename WritePod>
  void VictimsMap(std::string_view name, const std::optional<Map>& victims, WritePod pod) {
    Field(name);
    if (!victims) return Null();
    StartObject();
    for (const auto& [node, v] : *victims) {
      Key(node);
      StartObject();
      Field("Pods");
      StartArray();
      for (const auto& victim : Pods(v)) pod(*this, victim);
      EndArray();
      Field("NumPDBViolations");
      Int(v.num_pdb_violations);
      EndObject();
    }
    EndObject();
  }
  void MetaVictimsMap(std::string_view name, const std::optional<NodeNameToMetaVictims>& victims) {
    VictimsMap(name, victims, [](Writer& w, const std::string& uid) {
      w.StartObject();
      w.StringField("UID", uid);
      w.EndObject();
    });
  }

 private:
  static std::string GoQuoted(std::string_view s) {
    std::string quoted;
    api::json::AppendQuoted(quoted, s, api::json::Quoting::kGo);
    return quoted;
  }

  api::json::StringWriter json_;
};

// A Go struct: one JSON object whose fields `fields(writer)` writes.
template <typename Fields>
std::string EncodeObject(Fields fields, size_t reserve = 64) {
  std::string out;
  out.reserve(reserve);
  {
    Writer w(out);  // gives `out` its size when it goes
    w.StartObject();
    fields(w);
    w.EndObject();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding

// Go's encoding/json matches a key to a field ignoring ASCII case (an exact match is one).
bool SameField(std::string_view key, std::string_view field) {
  if (key.size() != field.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(key[i]) != lower(field[i])) return false;
  }
  return true;
}

std::string_view TypeOf(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "bool";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "value";
}

using api::field_path::Child;
using api::field_path::Index;
std::string MapKey(std::string_view path, std::string_view key) { return fmt::format("{}[\"{}\"]", path, key); }

// Gives an object's member a value for as long as it lives, then puts back the one it had (or
// removes it again when there was none).
class LentMember {
 public:
  LentMember(Value& object, std::string_view key, std::string_view value, api::json::Allocator& alloc)
      : object_(object), key_(key) {
    Value lent = api::json::MakeString(value, alloc);
    if (Value* member = api::json::Find(object, key)) {
      had_ = true;
      saved_.Swap(*member);
      member->Swap(lent);
    } else {
      api::json::Set(object, key, std::move(lent), alloc);
    }
  }
  ~LentMember() {
    if (!had_) {
      api::json::Remove(object_, key_);
    } else if (Value* member = api::json::Find(object_, key_)) {
      member->Swap(saved_);
    }
  }
  LentMember(const LentMember&) = delete;
  LentMember& operator=(const LentMember&) = delete;

 private:
  Value& object_;
  std::string_view key_;
  bool had_ = false;
  Value saved_;
};

// Walks one parsed body into a wire type, keeping the first problem found (with its field path);
// every step returns false once there is one. The body's DOM is edited only to lend a pod or node
// without apiVersion and kind the ones api/decode.h needs, taken off again afterwards.
class Decoder {
 public:
  explicit Decoder(api::json::Allocator& alloc, const NodeReuse* reuse = nullptr) : alloc_(alloc), reuse_(reuse) {}

  std::string TakeError() { return std::move(error_); }

  bool Fail(std::string_view path, std::string_view message) {
    error_ = path.empty() ? std::string(message) : fmt::format("{}: {}", path, message);
    return false;
  }
  bool Mismatch(const Value& v, std::string_view path, std::string_view want) {
    return Fail(path, fmt::format("expected {}, got {}", want, TypeOf(v)));
  }

  //! An object, or `null` (a nil pointer or map); anything else is an error.
  bool Object(const Value& v, std::string_view path) {
    return v.IsObject() || v.IsNull() || Mismatch(v, path, "an object");
  }

  // `null` leaves a string or an integer as it is (Go's encoding/json does).
  bool String(const Value& v, std::string_view path, std::string& out) {
    if (v.IsNull()) return true;
    if (!v.IsString()) return Mismatch(v, path, "a string");
    out.assign(v.GetString(), v.GetStringLength());
    return true;
  }
  bool Int64(const Value& v, std::string_view path, int64_t& out) {
    if (v.IsNull()) return true;
    if (!v.IsNumber()) return Mismatch(v, path, "an integer");
    // Go reads an int64 field from an integer literal only: no fraction, exponent or overflow.
    if (!v.IsInt64()) return Fail(path, fmt::format("{} is not a 64-bit integer", api::json::Encode(v)));
    out = v.GetInt64();
    return true;
  }
  bool Strings(const Value& v, std::string_view path, std::optional<std::vector<std::string>>& out) {
    out.reset();
    if (v.IsNull()) return true;
    if (!v.IsArray()) return Mismatch(v, path, "an array");
    out.emplace();
    out->reserve(v.Size());
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      std::string& name = out->emplace_back();
      // The path is made only for an error: a node cache's answer names every node.
      if (v[i].IsString()) {
        name.assign(v[i].GetString(), v[i].GetStringLength());
      } else if (!String(v[i], Index(path, i), name)) {
        return false;
      }
    }
    return true;
  }
  bool FailedNodes(const Value& v, std::string_view path, std::optional<FailedNodesMap>& out) {
    out.reset();
    if (v.IsNull()) return true;
    if (!v.IsObject()) return Mismatch(v, path, "an object");
    out.emplace();
    for (const auto& m : v.GetObject()) {
      const std::string_view node = api::json::View(m.name);
      std::string reason;
      if (m.value.IsString()) {
        reason.assign(m.value.GetString(), m.value.GetStringLength());
      } else if (!String(m.value, MapKey(path, node), reason)) {
        return false;
      }
      out->insert_or_assign(std::string(node), std::move(reason));
    }
    return true;
  }

  bool Pod(Value& v, std::string_view path, PodPtr& out) {
    out = nullptr;
    if (v.IsNull()) return true;
    auto decoded = DecodeObject<api::Pod>(v, path, "Pod", &api::DecodePod);
    if (!decoded) return false;
    out = std::move(decoded);
    return true;
  }
  bool Node(Value& v, std::string_view path, NodePtr& out) {
    if (reuse_ != nullptr && *reuse_ && (out = Reused(v))) return true;
    auto decoded = DecodeObject<api::Node>(v, path, "Node", &api::DecodeNode);
    if (!decoded) return false;
    out = std::move(decoded);
    return true;
  }
  //! The caller's node for an item with the same name, uid and non-empty resourceVersion (the
  //! same version of the same object), found without decoding the item; null otherwise.
  NodePtr Reused(const Value& v) const {
    if (!v.IsObject()) return nullptr;
    const Value* meta = api::json::Find(v, "metadata");
    if (meta == nullptr || !meta->IsObject()) return nullptr;
    auto text = [meta](std::string_view key) -> std::string_view {
      const Value* f = api::json::Find(*meta, key);
      return f != nullptr && f->IsString() ? api::json::View(*f) : std::string_view();
    };
    const std::string_view rv = text("resourceVersion");
    if (rv.empty()) return nullptr;
    return (*reuse_)(text("name"), text("uid"), rv);
  }
  //! An element of a list of pods: a nil *v1.Pod there is of no use to anyone, so an error.
  bool ListedPod(Value& v, std::string_view path, PodPtr& out) {
    if (v.IsNull()) return Mismatch(v, path, "a Pod object");
    return Pod(v, path, out);
  }

  //! A v1.NodeList: its `items` (other members ignored).
  bool NodeList(Value& v, std::string_view path, std::optional<std::vector<NodePtr>>& out) {
    out.reset();
    if (v.IsNull()) return true;
    if (!v.IsObject()) return Mismatch(v, path, "an object");
    out.emplace();
    Value* items = nullptr;
    for (auto& m : v.GetObject()) {
      if (SameField(api::json::View(m.name), "items")) items = &m.value;
    }
    if (items == nullptr || items->IsNull()) return true;
    const std::string items_path = Child(path, "items");
    if (!items->IsArray()) return Mismatch(*items, items_path, "an array");
    out->reserve(items->Size());
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      if (!Node((*items)[i], Index(items_path, i), out->emplace_back())) return false;
    }
    return true;
  }

  bool VictimsMap(Value& v, std::string_view path, std::optional<NodeNameToVictims>& out) {
    return AnyVictimsMap(v, path, out, [this](Value& pods, std::string_view p, std::vector<PodPtr>& victims) {
      return PodList(pods, p, victims);
    });
  }
  bool MetaVictimsMap(Value& v, std::string_view path, std::optional<NodeNameToMetaVictims>& out) {
    return AnyVictimsMap(v, path, out, [this](Value& pods, std::string_view p, std::vector<std::string>& uids) {
      return MetaPods(pods, p, uids);
    });
  }

 private:
  // A map of node name to Victims or MetaVictims, their `Pods` read by `read_pods`; a null value
  // (a nil pointer) is no victims.
  template <typename Map, typename ReadPods>
  bool AnyVictimsMap(Value& v, std::string_view path, std::optional<Map>& out, ReadPods read_pods) {
    out.reset();
    if (v.IsNull()) return true;
    if (!v.IsObject()) return Mismatch(v, path, "an object");
    out.emplace();
    for (auto& m : v.GetObject()) {
      const std::string_view node = api::json::View(m.name);
      const std::string node_path = MapKey(path, node);
      typename Map::mapped_type victims;
      if (!Object(m.value, node_path)) return false;
      if (m.value.IsObject()) {
        for (auto& f : m.value.GetObject()) {
          const std::string_view key = api::json::View(f.name);
          if (SameField(key, "Pods")) {
            if (!read_pods(f.value, Child(node_path, "Pods"), Pods(victims))) return false;
          } else if (SameField(key, "NumPDBViolations")) {
            if (!Int64(f.value, Child(node_path, "NumPDBViolations"), victims.num_pdb_violations)) return false;
          }
        }
      }
      out->insert_or_assign(std::string(node), std::move(victims));
    }
    return true;
  }

  bool PodList(Value& v, std::string_view path, std::vector<PodPtr>& out) {
    out.clear();
    if (v.IsNull()) return true;
    if (!v.IsArray()) return Mismatch(v, path, "an array");
    out.reserve(v.Size());
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (!ListedPod(v[i], Index(path, i), out.emplace_back())) return false;
    }
    return true;
  }
  // [{"UID":"..."}]: a MetaPod's other keys are ignored; a null one (a nil *MetaPod, which
  // upstream's client would dereference) is an error.
  bool MetaPods(const Value& v, std::string_view path, std::vector<std::string>& out) {
    out.clear();
    if (v.IsNull()) return true;
    if (!v.IsArray()) return Mismatch(v, path, "an array");
    out.reserve(v.Size());
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      const std::string pod_path = Index(path, i);
      const Value& pod = v[i];
      if (!pod.IsObject()) return Mismatch(pod, pod_path, "an object");
      std::string& uid = out.emplace_back();
      for (const auto& f : pod.GetObject()) {
        if (SameField(api::json::View(f.name), "UID") && !String(f.value, Child(pod_path, "UID"), uid)) return false;
      }
    }
    return true;
  }

  // A Pod or Node through api/decode.h, which wants apiVersion and kind: Go's client leaves them
  // out of objects from its informers, and Go's decoding into a v1.Node reads neither, so the
  // right ones are lent for the decoding (whatever the object says) and the kept JSON is the
  // object as it came.
  template <typename T, typename DecodeFn>
  std::shared_ptr<T> DecodeObject(Value& v, std::string_view path, std::string_view kind, DecodeFn decode) {
    if (!v.IsObject()) {
      Mismatch(v, path, fmt::format("a {} object", kind));
      return nullptr;
    }
    std::expected<std::shared_ptr<T>, api::FieldErrors> decoded;
    {
      const LentMember lent_kind(v, "kind", kind, alloc_);
      const LentMember lent_version(v, "apiVersion", "v1", alloc_);
      decoded = decode(v, api::DecodeOptions{.keep_json = false});
    }
    if (!decoded) {
      std::string message;
      for (const api::FieldError& e : decoded.error()) {
        if (!message.empty()) message += "; ";
        message += e.field.empty() ? fmt::format("{}: {}", path, e.message)
                                   : fmt::format("{}.{}: {}", path, e.field, e.message);
      }
      error_ = std::move(message);
      return nullptr;
    }
    (*decoded)->json = std::make_shared<const std::string>(api::json::Encode(v));
    return std::move(*decoded);
  }

  api::json::Allocator& alloc_;
  const NodeReuse* reuse_ = nullptr;
  std::string error_;
};

// Parses a body and walks its top-level object's members with `member(decoder, key, value)`;
// `null` is the zero value, as json.Unmarshal leaves its target.
template <typename T, typename MemberFn>
std::expected<T, std::string> DecodeStruct(std::string_view body, MemberFn member, const NodeReuse* reuse = nullptr) {
  api::json::Document doc;
  if (auto parsed = api::json::Parse(body, doc); !parsed) return std::unexpected(parsed.error().ToString());
  T out{};
  if (doc.IsNull()) return out;
  Decoder d(doc.GetAllocator(), reuse);
  if (!doc.IsObject()) return std::unexpected(fmt::format("expected an object, got {}", TypeOf(doc)));
  for (auto& m : doc.GetObject()) {
    if (!member(d, api::json::View(m.name), m.value, out)) return std::unexpected(d.TakeError());
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string EncodeExtenderArgs(const ExtenderArgs& args) {
  // Most of a request is its nodes' JSON: one allocation for all of it.
  size_t size = 256 + (args.pod && args.pod->json ? args.pod->json->size() : 0);
  if (args.nodes) {
    for (const NodePtr& n : *args.nodes) size += n && n->json ? n->json->size() + 1 : 0;
  }
  if (args.node_names) {
    for (const std::string& n : *args.node_names) size += n.size() + 3;
  }
  return EncodeObject(
      [&](Writer& w) {
        w.Field("Pod");
        w.Pod(args.pod);
        w.NodeList("Nodes", args.nodes);
        w.Strings("NodeNames", args.node_names);
      },
      size);
}

std::string EncodeFilterResult(const ExtenderFilterResult& result) {
  return EncodeObject([&](Writer& w) {
    w.NodeList("Nodes", result.nodes);
    w.Strings("NodeNames", result.node_names);
    w.FailedNodes("FailedNodes", result.failed_nodes);
    w.FailedNodes("FailedAndUnresolvableNodes", result.failed_and_unresolvable_nodes);
    w.StringField("Error", result.error);
  });
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  std::string out;
  {
    Writer w(out);  // gives `out` its size when it goes
    w.StartArray();
    for (const HostPriority& p : list) {
      w.StartObject();
      w.StringField("Host", p.host);
      w.Field("Score");
      w.Int(p.score);
      w.EndObject();
    }
    w.EndArray();
  }
  return out;
}

std::string EncodePreemptionArgs(const ExtenderPreemptionArgs& args) {
  return EncodeObject([&](Writer& w) {
    w.Field("Pod");
    w.Pod(args.pod);
    w.VictimsMap("NodeNameToVictims", args.node_name_to_victims,
                 [](Writer& pods, const PodPtr& pod) { pods.Pod(pod); });
    w.MetaVictimsMap("NodeNameToMetaVictims", args.node_name_to_meta_victims);
  });
}

std::string EncodePreemptionResult(const ExtenderPreemptionResult& result) {
  return EncodeObject([&](Writer& w) { w.MetaVictimsMap("NodeNameToMetaVictims", result.node_name_to_meta_victims); });
}

std::string EncodeBindingArgs(const ExtenderBindingArgs& args) {
  return EncodeObject([&](Writer& w) {
    w.StringField("PodName", args.pod_name);
    w.StringField("PodNamespace", args.pod_namespace);
    w.StringField("PodUID", args.pod_uid);
    w.StringField("Node", args.node);
  });
}

std::string EncodeBindingResult(const ExtenderBindingResult& result) {
  return EncodeObject([&](Writer& w) { w.StringField("Error", result.error); });
}

std::expected<ExtenderArgs, std::string> DecodeExtenderArgs(std::string_view body, const NodeReuse& reuse) {
  return DecodeStruct<ExtenderArgs>(
      body,
      [](Decoder& d, std::string_view key, Value& v, ExtenderArgs& out) {
        if (SameField(key, "Pod")) return d.Pod(v, "Pod", out.pod);
        if (SameField(key, "Nodes")) return d.NodeList(v, "Nodes", out.nodes);
        if (SameField(key, "NodeNames")) return d.Strings(v, "NodeNames", out.node_names);
        return true;
      },
      &reuse);
}

std::expected<ExtenderFilterResult, std::string> DecodeFilterResult(std::string_view body) {
  return DecodeStruct<ExtenderFilterResult>(
      body, [](Decoder& d, std::string_view key, Value& v, ExtenderFilterResult& out) {
        if (SameField(key, "Nodes")) return d.NodeList(v, "Nodes", out.nodes);
        if (SameField(key, "NodeNames")) return d.Strings(v, "NodeNames", out.node_names);
        if (SameField(key, "FailedNodes")) return d.FailedNodes(v, "FailedNodes", out.failed_nodes);
        if (SameField(key, "FailedAndUnresolvableNodes")) {
          return d.FailedNodes(v, "FailedAndUnresolvableNodes", out.failed_and_unresolvable_nodes);
        }
        if (SameField(key, "Error")) return d.String(v, "Error", out.error);
        return true;
      });
}

std::expected<HostPriorityList, std::string> DecodeHostPriorityList(std::string_view body) {
  api::json::Document doc;
  if (auto parsed = api::json::Parse(body, doc); !parsed) return std::unexpected(parsed.error().ToString());
  HostPriorityList out;
  if (doc.IsNull()) return out;
  Decoder d(doc.GetAllocator());
  if (!doc.IsArray()) return std::unexpected(fmt::format("expected an array, got {}", TypeOf(doc)));
  out.reserve(doc.Size());
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const Value& item = doc[i];
    const std::string path = Index("", i);
    HostPriority& p = out.emplace_back();
    // A null element is a zero HostPriority, as Go reads null into a struct.
    if (!d.Object(item, path)) return std::unexpected(d.TakeError());
    if (item.IsNull()) continue;
    for (const auto& m : item.GetObject()) {
      const std::string_view key = api::json::View(m.name);
      const bool ok = SameField(key, "Host")    ? d.String(m.value, Child(path, "Host"), p.host)
                      : SameField(key, "Score") ? d.Int64(m.value, Child(path, "Score"), p.score)
                                                : true;
      if (!ok) return std::unexpected(d.TakeError());
    }
  }
  return out;
}

std::expected<ExtenderPreemptionArgs, std::string> DecodePreemptionArgs(std::string_view body) {
  return DecodeStruct<ExtenderPreemptionArgs>(
      body, [](Decoder& d, std::string_view key, Value& v, ExtenderPreemptionArgs& out) {
        if (SameField(key, "Pod")) return d.Pod(v, "Pod", out.pod);
        if (SameField(key, "NodeNameToVictims")) return d.VictimsMap(v, "NodeNameToVictims", out.node_name_to_victims);
        if (SameField(key, "NodeNameToMetaVictims")) {
          return d.MetaVictimsMap(v, "NodeNameToMetaVictims", out.node_name_to_meta_victims);
        }
        return true;
      });
}

std::expected<ExtenderPreemptionResult, std::string> DecodePreemptionResult(std::string_view body) {
  return DecodeStruct<ExtenderPreemptionResult>(
      body, [](Decoder& d, std::string_view key, Value& v, ExtenderPreemptionResult& out) {
        if (SameField(key, "NodeNameToMetaVictims")) {
          return d.MetaVictimsMap(v, "NodeNameToMetaVictims", out.node_name_to_meta_victims);
        }
        return true;
      });
}

std::expected<ExtenderBindingArgs, std::string> DecodeBindingArgs(std::string_view body) {
  return DecodeStruct<ExtenderBindingArgs>(body,
                                           [](Decoder& d, std::string_view key, Value& v, ExtenderBindingArgs& out) {
                                             if (SameField(key, "PodName")) return d.String(v, "PodName", out.pod_name);
                                             if (SameField(key, "PodNamespace"))
                                               return d.String(v, "PodNamespace", out.pod_namespace);
                                             if (SameField(key, "PodUID")) return d.String(v, "PodUID", out.pod_uid);
                                             if (SameField(key, "Node")) return d.String(v, "Node", out.node);
                                             return true;
                                           });
}

std::expected<ExtenderBindingResult, std::string> DecodeBindingResult(std::string_view body) {
  return DecodeStruct<ExtenderBindingResult>(
      body, [](Decoder& d, std::string_view key, Value& v, ExtenderBindingResult& out) {
        if (SameField(key, "Error")) return d.String(v, "Error", out.error);
        return true;
      });
}

}  // namespace kubesched::extender
