#include "server/media_type.h"

#include <algorithm>
#include <cctype>

namespace kubesched::server {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (true) {
    size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

bool IsJsonType(const std::string& type) {
  return type == "application/json" || type == "*/*" || type == "application/*";
}

std::string Param(const MediaType& m, const std::string& key) {
  auto it = m.params.find(key);
  return it == m.params.end() ? "" : it->second;
}

}  // namespace

std::vector<MediaType> ParseAccept(std::string_view accept) {
  std::vector<MediaType> out;
  for (std::string_view item : Split(accept, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    std::vector<std::string_view> fields = Split(item, ';');
    MediaType m;
    m.type = Lower(Trim(fields[0]));
    for (size_t i = 1; i < fields.size(); ++i) {
      std::string_view f = Trim(fields[i]);
      size_t eq = f.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view value = Trim(f.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      m.params[Lower(Trim(f.substr(0, eq)))] = std::string(value);
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::expected<ObjectOutput, ApiError> NegotiateObjectOutput(std::string_view accept, bool list) {
  std::vector<MediaType> types = ParseAccept(accept);
  if (types.empty()) return ObjectOutput{};
  for (const MediaType& m : types) {
    if (!IsJsonType(m.type)) continue;
    const std::string as = Param(m, "as");
    if (as.empty()) return ObjectOutput{};
    const std::string g = Param(m, "g");
    const std::string v = Param(m, "v");
    if (g != "meta.k8s.io" || (v != "v1" && v != "v1beta1")) continue;
    ObjectOutput out;
    out.meta_version = v;
    out.content_type = "application/json;as=" + as + ";v=" + v + ";g=meta.k8s.io";
    if (as == "Table") {
      out.format = ObjectFormat::kTable;
      return out;
    }
    if (as == "PartialObjectMetadata" && !list) {
      out.format = ObjectFormat::kPartialObjectMetadata;
      return out;
    }
    if (as == "PartialObjectMetadataList" && list) {
      out.format = ObjectFormat::kPartialObjectMetadataList;
      return out;
    }
  }
  return std::unexpected(NotAcceptable(accept));
}

DiscoveryOutput NegotiateDiscovery(std::string_view accept) {
  for (const MediaType& m : ParseAccept(accept)) {
    if (!IsJsonType(m.type)) continue;
    const std::string as = Param(m, "as");
    if (as.empty()) return DiscoveryOutput{};
    if (as != "APIGroupDiscoveryList" || Param(m, "g") != "apidiscovery.k8s.io") continue;
    const std::string v = Param(m, "v");
    if (v == "v2") {
      return {DiscoveryFormat::kAggregatedV2, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"};
    }
    if (v == "v2beta1") {
      return {DiscoveryFormat::kAggregatedV2Beta1,
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"};
    }
  }
  return DiscoveryOutput{};
}

std::string BaseMediaType(std::string_view content_type) {
  return Lower(Trim(content_type.substr(0, content_type.find(';'))));
}

}  // namespace kubesched::server
