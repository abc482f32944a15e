// JSON Patch, RFC 6902, over JSON Pointers (RFC 6901).
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/errors.h"
#include "store/patch.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

Error Unprocessable(std::string message) { return Error{Error::Reason::kInvalid, std::move(message), {}}; }

// RFC 6901: "/a/b~1c" → {"a", "b/c"}.
std::optional<std::vector<std::string>> ParsePointer(std::string_view p) {
  std::vector<std::string> out;
  if (p.empty()) return out;
  if (p.front() != '/') return std::nullopt;
  p.remove_prefix(1);
  while (true) {
    size_t slash = p.find('/');
    std::string_view raw = p.substr(0, slash);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        return std::nullopt;
      } else {
        token += raw[i];
      }
    }
    out.push_back(std::move(token));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return out;
}

std::optional<size_t> Index(std::string_view token, size_t size, bool allow_end) {
  if (allow_end && token == "-") return size;
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  size_t i = 0;
  auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), i);
  if (ec != std::errc() || p != token.data() + token.size()) return std::nullopt;
  if (i > size || (!allow_end && i == size)) return std::nullopt;
  return i;
}

// The value a pointer names, or null.
json::Value* Resolve(json::Value& root, const std::vector<std::string>& path) {
  json::Value* v = &root;
  for (const auto& t : path) {
    if (v->IsObject()) {
      v = json::Find(*v, t);
    } else if (v->IsArray()) {
      auto i = Index(t, v->Size(), false);
      v = i ? &(*v)[static_cast<rapidjson::SizeType>(*i)] : nullptr;
    } else {
      v = nullptr;
    }
    if (v == nullptr) return nullptr;
  }
  return v;
}

Result<void> Add(json::Value& root, const std::vector<std::string>& path, json::Value value, json::Allocator& a,
                 std::string_view where) {
  if (path.empty()) {
    root = std::move(value);
    return {};
  }
  std::vector<std::string> parent_path(path.begin(), path.end() - 1);
  json::Value* parent = Resolve(root, parent_path);
  if (parent == nullptr)
    return std::unexpected(
        Unprocessable(fmt::format("add operation does not apply: doc is missing path: \"{}\"", where)));
  if (parent->IsObject()) {
    json::Set(*parent, path.back(), std::move(value), a);
    return {};
  }
  if (parent->IsArray()) {
    auto i = Index(path.back(), parent->Size(), true);
    if (!i)
      return std::unexpected(
          Unprocessable(fmt::format("add operation does not apply: index out of bounds: \"{}\"", where)));
    parent->PushBack(json::Value(), a);
    for (size_t k = parent->Size() - 1; k > *i; --k) {
      (*parent)[static_cast<rapidjson::SizeType>(k)].Swap((*parent)[static_cast<rapidjson::SizeType>(k - 1)]);
    }
    (*parent)[static_cast<rapidjson::SizeType>(*i)] = std::move(value);
    return {};
  }
  return std::unexpected(
      Unprocessable(fmt::format("add operation does not apply: doc is missing path: \"{}\"", where)));
}

Result<json::Value> Take(json::Value& root, const std::vector<std::string>& path, std::string_view op,
                         std::string_view where) {
  auto missing = [&] {
    return std::unexpected(
        Unprocessable(fmt::format("{} operation does not apply: doc is missing path: \"{}\"", op, where)));
  };
  if (path.empty()) return missing();
  std::vector<std::string> parent_path(path.begin(), path.end() - 1);
  json::Value* parent = Resolve(root, parent_path);
  if (parent == nullptr) return missing();
  if (parent->IsObject()) {
    json::Value* v = json::Find(*parent, path.back());
    if (v == nullptr) return missing();
    json::Value out = std::move(*v);
    json::Remove(*parent, path.back());
    return out;
  }
  if (parent->IsArray()) {
    auto i = Index(path.back(), parent->Size(), false);
    if (!i) return missing();
    json::Value out = std::move((*parent)[static_cast<rapidjson::SizeType>(*i)]);
    parent->Erase(parent->Begin() + *i);
    return out;
  }
  return missing();
}

}  // namespace

Result<void> ApplyJsonPatch(json::Document& doc, std::string_view patch) {
  json::Document ops;
  if (auto r = json::Parse(patch, ops); !r) return std::unexpected(BadRequest(r.error().ToString()));
  if (!ops.IsArray()) return std::unexpected(BadRequest("a JSON patch must be an array of operations"));
  auto& a = doc.GetAllocator();
  for (const auto& op_value : ops.GetArray()) {
    const std::string_view op = json::GetString(op_value, "op");
    const std::string_view where = json::GetString(op_value, "path");
    auto path = ParsePointer(where);
    if (!path) return std::unexpected(BadRequest(fmt::format("invalid JSON pointer \"{}\"", where)));
    const json::Value* value = json::Find(op_value, "value");
    auto need_value = [&]() -> Result<void> {
      if (value == nullptr) return std::unexpected(BadRequest(fmt::format("{} operation has no value", op)));
      return {};
    };
    if (op == "add") {
      if (auto r = need_value(); !r) return r;
      if (auto r = Add(doc, *path, json::Value(*value, a), a, where); !r) return r;
    } else if (op == "remove") {
      if (auto r = Take(doc, *path, op, where); !r) return std::unexpected(r.error());
    } else if (op == "replace") {
      if (auto r = need_value(); !r) return r;
      json::Value* target = Resolve(doc, *path);
      if (target == nullptr) {
        return std::unexpected(
            Unprocessable(fmt::format("replace operation does not apply: doc is missing key: {}", where)));
      }
      target->CopyFrom(*value, a);
    } else if (op == "move" || op == "copy") {
      const std::string_view from_text = json::GetString(op_value, "from");
      auto from = ParsePointer(from_text);
      if (!from) return std::unexpected(BadRequest(fmt::format("invalid JSON pointer \"{}\"", from_text)));
      json::Value moved;
      if (op == "move") {
        auto r = Take(doc, *from, op, from_text);
        if (!r) return std::unexpected(r.error());
        moved = std::move(*r);
      } else {
        json::Value* src = Resolve(doc, *from);
        if (src == nullptr) {
          return std::unexpected(
              Unprocessable(fmt::format("copy operation does not apply: doc is missing from path: {}", from_text)));
        }
        moved.CopyFrom(*src, a);
      }
      if (auto r = Add(doc, *path, std::move(moved), a, where); !r) return r;
    } else if (op == "test") {
      if (auto r = need_value(); !r) return r;
      json::Value* target = Resolve(doc, *path);
      if (target == nullptr || *target != *value) {
        return std::unexpected(Unprocessable(fmt::format("testing value {} failed: test failed", where)));
      }
    } else {
      return std::unexpected(BadRequest(fmt::format("Unexpected kind: {}", op)));
    }
  }
  return {};
}

}  // namespace kubesched::store
