// MemoryStore::SaveState / LoadState: the whole store as one JSON document,
//   {"kind":"KubeschedStoreState","resourceVersion":"N","objects":[{...},...]}
// with each object exactly as stored (its apiVersion and kind say which resource it is); and
// OpenState / CloseState: that snapshot kept current by the journal (store/journal.h).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "store/errors.h"
#include "store/memory_store.h"
#include "store/meta.h"
#include "util/atomic_file.h"
#include "util/log.h"

namespace kubesched::store {

namespace json = api::json;

namespace {
constexpr std::string_view kStateKind = "KubeschedStoreState";

// A resourceVersion from a file: a decimal number below 2^63 (etcd's revisions are int64), so that
// counting on from it cannot wrap.
std::optional<uint64_t> ParseStoredVersion(std::string_view text) {
  auto rv = ParseResourceVersion(text);
  if (!rv || *rv >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - Journal::kMaxUnsynced) {
    return std::nullopt;
  }
  return rv;
}

// What SaveState leaves behind when it is killed between creating its temporary file and
// renaming it (util::WriteFileAtomically's ".<name>.tmp-XXXXXX").
void RemoveTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().starts_with(prefix)) fs::remove(it->path(), ec);
  }
}

}  // namespace

const ResourceType* MemoryStore::StoredTypeOf(const json::Value& object) const {
  const std::string_view api_version = json::GetString(object, "apiVersion");
  const std::string_view kind = json::GetString(object, "kind");
  for (const ResourceType* t : types_) {
    if (!t->stored_as && t->GroupVersion() == api_version && t->kind == kind) return t;
  }
  const size_t slash = api_version.rfind('/');
  if (slash == std::string_view::npos) return nullptr;
  return custom_.StorageForKind(api_version.substr(0, slash), kind);
}

std::string MemoryStore::StateTextLocked() const {
  std::string out = fmt::format("{{\"kind\":\"{}\",\"resourceVersion\":\"{}\",\"objects\":[", kStateKind, rv_);
  bool first = true;
  // CRDs come before their custom resources, so a load defines each before its objects.
  for (const ResourceType* t : StorageTypes()) {
    auto it = objects_.find(t);
    if (it == objects_.end()) continue;
    for (const auto& [key, obj] : it->second) {
      if (!first) out += ",\n";
      first = false;
      out += obj->json;
    }
  }
  out += "]}\n";
  return out;
}

Result<void> MemoryStore::SaveState(const std::string& path) const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    out = StateTextLocked();
  }
  // A reader (or a restart after a crash) sees the old state or the new one, never half of one.
  // Secrets are among the objects: the owner's alone.
  if (auto written = util::WriteFileAtomically(path, out, 0600); !written) {
    return std::unexpected(Internal("cannot save the state to " + written.error()));
  }
  return {};
}

Result<void> MemoryStore::LoadState(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(Internal(fmt::format("cannot read {}", path)));
  std::stringstream buf;
  buf << in.rdbuf();
  json::Document doc;
  if (auto r = json::Parse(buf.str(), doc); !r) {
    return std::unexpected(BadRequest(fmt::format("{}: {}", path, r.error().ToString())));
  }
  if (!doc.IsObject() || json::GetString(doc, "kind") != kStateKind) {
    return std::unexpected(BadRequest(fmt::format("{}: not a kubesched store state (kind {})", path, kStateKind)));
  }
  const std::string_view saved_text = json::GetString(doc, "resourceVersion");
  auto saved_rv = ParseStoredVersion(saved_text);
  if (!saved_rv) {
    return std::unexpected(
        BadRequest(fmt::format("{}: resourceVersion \"{}\" is not a decimal number below {}", path, saved_text,
                               static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - Journal::kMaxUnsynced)));
  }
  const json::Value* objects = json::Find(doc, "objects");
  if (objects == nullptr || !objects->IsArray()) {
    return std::unexpected(BadRequest(fmt::format("{}: objects missing", path)));
  }
  std::unordered_map<const ResourceType*, Objects> loaded;
  std::vector<std::string> loaded_definitions;
  uint64_t max_rv = *saved_rv;
  for (auto& v : objects->GetArray()) {
    const std::string_view kind = json::GetString(v, "kind");
    const ResourceType* type = StoredTypeOf(v);
    if (type == nullptr) {
      return std::unexpected(
          BadRequest(fmt::format("{}: no resource serves {} {}", path, json::GetString(v, "apiVersion"), kind)));
    }
    json::Document one;
    one.CopyFrom(v, one.GetAllocator());
    const json::Value* meta = json::Find(one, "metadata");
    auto rv = meta ? ParseStoredVersion(json::GetString(*meta, "resourceVersion")) : std::nullopt;
    if (!rv) return std::unexpected(BadRequest(fmt::format("{}: {} without a resourceVersion", path, kind)));
    max_rv = std::max(max_rv, *rv);
    if (type->defines_custom_resources) {
      DefinitionChanged(one, /*deleted=*/false);
      loaded_definitions.emplace_back(json::GetString(*json::Find(one, "metadata"), "name"));
    }
    ObjectPtr obj = MakeObject(*type, one, *rv);
    loaded[type][Key(obj->namespace_, obj->name)] = obj;
  }
  // CRDs the store had and the state has not serve nothing now.
  for (const std::string& name : custom_.DefinedNames()) {
    if (std::ranges::find(loaded_definitions, name) == loaded_definitions.end()) custom_.Undefine(name);
  }
  std::lock_guard lock(mu_);
  objects_ = std::move(loaded);
  rv_ = max_rv;
  history_.clear();
  compacted_rv_ = rv_;
  for (auto& w : watchers_) w->Close("store state replaced");
  watchers_.clear();
  rv_cv_.notify_all();
  return {};
}

Result<void> MemoryStore::OpenState(const std::string& path) {
  RemoveTemporaries(path);
  if (std::filesystem::exists(path)) {
    if (auto loaded = LoadState(path); !loaded) return loaded;
  }
  const std::string journal_path = path + ".journal";
  const std::string next_path = path + ".journal.next";
  // The journal is removed by a clean stop: still there, the last run ended in a crash. (The
  // next one is there when the crash came in the middle of a compaction: its lines follow.)
  const bool crashed = std::filesystem::exists(journal_path) || std::filesystem::exists(next_path);
  uint64_t snapshot_rv = ResourceVersion();
  uint64_t last_rv = snapshot_rv;
  auto replay = [&](const std::string& file) {
    return Journal::Replay(file, [&](EventType type, json::Document& doc) -> std::expected<void, std::string> {
      const ResourceType* t = StoredTypeOf(doc);
      if (t == nullptr) {
        return std::unexpected(
            fmt::format("no resource serves {} {}", json::GetString(doc, "apiVersion"), json::GetString(doc, "kind")));
      }
      const json::Value* meta = json::Find(doc, "metadata");
      auto rv = meta ? ParseStoredVersion(json::GetString(*meta, "resourceVersion")) : std::nullopt;
      if (!rv) return std::unexpected(fmt::format("{} without a resourceVersion", t->kind));
      if (*rv <= snapshot_rv)
        return {};  // the snapshot has it (a crash after the snapshot, before the journal was emptied)
      last_rv = std::max(last_rv, *rv);
      if (t->defines_custom_resources) DefinitionChanged(doc, type == EventType::kDeleted);
      ObjectPtr obj = MakeObject(*t, doc, *rv);
      std::lock_guard lock(mu_);
      if (type == EventType::kDeleted) {
        ObjectsLocked(*t).erase(Key(obj->namespace_, obj->name));
      } else {
        ObjectsLocked(*t)[Key(obj->namespace_, obj->name)] = obj;
      }
      return {};
    });
  };
  auto replayed = replay(journal_path);
  if (replayed) replayed = replay(next_path);
  if (!replayed) return std::unexpected(BadRequest(replayed.error()));
  {
    std::lock_guard lock(mu_);
    rv_ = last_rv;
    // Watchers may have seen changes the crash kept from the disk: number past any of them.
    if (crashed) rv_ += Journal::kMaxUnsynced;
    history_.clear();
    compacted_rv_ = rv_;
  }
  // The snapshot now holds everything; the journal starts empty.
  if (auto saved = SaveState(path); !saved) return saved;
  std::error_code ec;
  std::filesystem::remove(next_path, ec);
  if (ec) return std::unexpected(Internal(fmt::format("{}: cannot remove: {}", next_path, ec.message())));
  auto journal = Journal::Open(journal_path);
  if (!journal) return std::unexpected(Internal(journal.error()));
  std::shared_ptr<Journal> opened = std::move(*journal);
  std::lock_guard lock(mu_);
  if (auto emptied = opened->Truncate(); !emptied) return std::unexpected(Internal(emptied.error()));
  journal_ = std::move(opened);
  state_path_ = path;
  snapshot_bytes_ = std::filesystem::file_size(path, ec);
  compaction_failed_ = false;
  return {};
}

Result<void> MemoryStore::CloseState() {
  std::shared_ptr<Journal> journal;
  {
    std::lock_guard lock(mu_);
    journal = std::move(journal_);
  }
  if (journal == nullptr) return {};
  if (auto synced = journal->Sync(); !synced) return std::unexpected(Internal(synced.error()));
  journal.reset();
  if (auto saved = SaveState(state_path_); !saved) return saved;
  std::error_code ec;
  for (const char* suffix : {".journal", ".journal.next"}) {
    std::filesystem::remove(state_path_ + suffix, ec);
    if (ec) return std::unexpected(Internal(fmt::format("{}{}: cannot remove: {}", state_path_, suffix, ec.message())));
  }
  return {};
}

// Online compaction. The journal's lines after the snapshot are the state's tail; once the
// journal outgrows its bound, under the lock: the snapshot's text is taken (at version R) and
// the lines after R go to a new journal, FILE.journal.next. Then, while writes go on: the old
// journal synced, the snapshot written (atomically) and the directory synced, and the next
// journal renamed over the old one. A crash at any point leaves a snapshot whose lines follow
// in the journal, the next one, or both (replay skips what a snapshot already holds), so no
// acknowledged write is lost, whatever the order the disk kept the renames in.
void MemoryStore::MaybeCompactJournal(const std::shared_ptr<Journal>& journal) {
  std::string snapshot;
  std::shared_ptr<Journal> old;
  std::shared_ptr<Journal> next;
  std::string path;
  {
    std::lock_guard lock(mu_);
    if (journal_ != journal || compacting_ || compaction_failed_) return;
    if (journal->Bytes() < std::max(options_.journal_compact_bytes, snapshot_bytes_)) return;
    path = state_path_;
    auto opened = Journal::Open(path + ".journal.next");
    if (opened) {
      next = std::move(*opened);
      if (auto emptied = next->Truncate(); !emptied) opened = std::unexpected(emptied.error());
    }
    if (!opened) {
      compaction_failed_ = true;
      KS_LOG.ErrorS(opened.error(), "Cannot compact the state's journal; it keeps growing");
      return;
    }
    compacting_ = true;
    snapshot = StateTextLocked();
    old = std::move(journal_);
    journal_ = next;
  }
  std::string failure;
  if (auto synced = old->Sync(); !synced) {
    failure = synced.error();
  } else if (auto written = util::WriteFileAtomically(path, snapshot, 0600); !written) {
    failure = "cannot save the state to " + written.error();
  } else if (auto dir = Journal::SyncDirectoryOf(path); !dir) {
    failure = dir.error();
  } else if (std::rename((path + ".journal.next").c_str(), (path + ".journal").c_str()) != 0) {
    failure = fmt::format("{}.journal.next: cannot rename: {}", path, std::strerror(errno));
  } else if (auto renamed = Journal::SyncDirectoryOf(path); !renamed) {
    failure = renamed.error();
  } else {
    next->Renamed(path + ".journal");
  }
  old.reset();
  std::lock_guard lock(mu_);
  compacting_ = false;
  if (!failure.empty()) {
    // Still recoverable (the old journal and the next one are both replayed); not retried, so
    // the two are never confused with a third.
    compaction_failed_ = true;
    KS_LOG.ErrorS(failure, "Cannot compact the state's journal; it keeps growing");
    return;
  }
  snapshot_bytes_ = snapshot.size();
  ++compactions_;
  KS_LOG_V(2).InfoS("Compacted the state's journal", "state", path, "snapshotBytes", snapshot_bytes_, "compactions",
                    compactions_);
}

}  // namespace kubesched::store
