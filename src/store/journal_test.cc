#include "store/journal.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "store/resources.h"
#include "store/store_test_util.h"

namespace kubesched::store {
namespace {

namespace fs = std::filesystem;
namespace json = api::json;
using testing::Doc;
using testing::PodJson;

std::string TempPath(std::string_view name) {
  const fs::path dir = fs::path(::testing::TempDir()) / "kubesched_journal_test";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  fs::remove(path);
  fs::remove(path.string() + ".journal");
  fs::remove(path.string() + ".journal.next");
  return path.string();
}

WatchEvent Event(EventType type, std::string_view name, uint64_t rv) {
  auto object = std::make_shared<Object>();
  object->json = fmt::format(R"({{"kind":"ConfigMap","metadata":{{"name":"{}","resourceVersion":"{}"}}}})", name, rv);
  object->resource_version = rv;
  return WatchEvent{type, object, nullptr};
}

std::vector<std::string> Replayed(const std::string& path) {
  std::vector<std::string> out;
  auto n = Journal::Replay(path, [&](EventType type, json::Document& doc) -> std::expected<void, std::string> {
    out.push_back(std::string(ToString(type)) + " " +
                  std::string(json::GetString(*json::Find(doc, "metadata"), "name")));
    return {};
  });
  EXPECT_TRUE(n.has_value()) << n.error();
  return out;
}

TEST(JournalTest, LinesAreOnDiskWhenSyncReturnsAndReplayInOrder) {
  const std::string path = TempPath("j1");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal.has_value()) << journal.error();
    (*journal)->Append(Event(EventType::kAdded, "a", 1));
    (*journal)->Append(Event(EventType::kModified, "a", 2));
    (*journal)->Append(Event(EventType::kDeleted, "a", 3));
    ASSERT_TRUE((*journal)->Sync().has_value());
    EXPECT_EQ((*journal)->Bytes(), fs::file_size(path));
    // The owner's alone: the objects include Secrets.
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_EQ(Replayed(path), (std::vector<std::string>{"ADDED a", "MODIFIED a", "DELETED a"}));
}

// Many writers at once share syncs (group commit), and each one's line is there when its Sync
// returns.
TEST(JournalTest, ConcurrentWritersAreGroupedAndNoneIsLost) {
  const std::string path = TempPath("j2");
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.has_value());
  std::mutex store_lock;  // Append is called under the store's lock
  uint64_t rv = 0;
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 200; ++i) {
        {
          std::lock_guard lock(store_lock);
          (*journal)->Append(Event(EventType::kAdded, fmt::format("w{}-{}", w, i), ++rv));
        }
        ASSERT_TRUE((*journal)->Sync().has_value());
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(Replayed(path).size(), 1600u);
}

// A crash in the middle of a write leaves a torn last line: nobody was told it succeeded, so it
// is dropped and cut off the file. A malformed line before the last is an error.
TEST(JournalTest, ATornLastLineIsCutAndABadLineElsewhereIsAnError) {
  const std::string path = TempPath("j3");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal.has_value());
    (*journal)->Append(Event(EventType::kAdded, "a", 1));
    (*journal)->Append(Event(EventType::kAdded, "b", 2));
    ASSERT_TRUE((*journal)->Sync().has_value());
  }
  const auto whole = fs::file_size(path);
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"na)";
  }
  EXPECT_EQ(Replayed(path), (std::vector<std::string>{"ADDED a", "ADDED b"}));
  EXPECT_EQ(fs::file_size(path), whole);

  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << "garbage\n"
        << R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"c"}}})"
        << "\n";
  }
  auto bad = Journal::Replay(path, [](EventType, json::Document&) -> std::expected<void, std::string> { return {}; });
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), path + ": line 3: not a journal line");
  // A journal that is not there has no lines.
  EXPECT_EQ(Journal::Replay(path + ".none", {}).value_or(99), 0u);
}

class StateTest : public testing::StoreFixture {};

// What a crash leaves (the journal, no final snapshot) comes back whole: every write that
// returned, and versions numbered past anything a watcher could have seen.
TEST_F(StateTest, AStoreKilledWithoutClosingComesBackWithEveryAcknowledgedWrite) {
  const std::string path = TempPath("state.json");
  uint64_t last_rv = 0;
  {
    util::VirtualClock clock(testing::kStartNs);
    auto first = NewBuiltinStore(clock, DefaultOptions());
    ASSERT_TRUE(first->OpenState(path).has_value());
    const ResourceType& pods = *first->FindResource("", "pods");
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(first->Create(pods, "default", Doc(PodJson(fmt::format("p{}", i)))).has_value());
    }
    ASSERT_TRUE(first->Delete(pods, "default", "p3", {.grace_period_seconds = 0}).has_value());
    ASSERT_TRUE(first->Bind("default", "p4", "", "n1").has_value());
    last_rv = first->ResourceVersion();
    // No CloseState: the process died here. (The journal's writer thread is stopped by the
    // destructor after the syncs the writes waited for; nothing it adds matters.)
  }
  EXPECT_TRUE(fs::exists(path + ".journal"));
  util::VirtualClock clock(testing::kStartNs);
  auto second = NewBuiltinStore(clock, DefaultOptions());
  ASSERT_TRUE(second->OpenState(path).has_value());
  const ResourceType& pods = *second->FindResource("", "pods");
  auto listed = second->List(pods, "default", {});
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->items.size(), 49u);
  auto bound = second->Get(pods, "default", "p4");
  ASSERT_TRUE(bound.has_value());
  EXPECT_NE((*bound)->json.find(R"("nodeName":"n1")"), std::string::npos);
  EXPECT_FALSE(second->Get(pods, "default", "p3").has_value());
  EXPECT_GE(second->ResourceVersion(), last_rv + Journal::kMaxUnsynced);
  // A watch from a version before the crash is told to relist.
  auto w = second->Watch(pods, "", WatchOptions{.resource_version = std::to_string(last_rv)});
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().reason, Error::Reason::kGone);

  // A clean stop leaves a snapshot and no journal, and the next start numbers on from it.
  ASSERT_TRUE(second->Create(pods, "default", Doc(PodJson("after"))).has_value());
  const uint64_t closed_rv = second->ResourceVersion();
  ASSERT_TRUE(second->CloseState().has_value());
  EXPECT_FALSE(fs::exists(path + ".journal"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto third = NewBuiltinStore(clock, DefaultOptions());
  ASSERT_TRUE(third->OpenState(path).has_value());
  EXPECT_EQ(third->ResourceVersion(), closed_rv);
  EXPECT_EQ(third->List(pods, "default", {})->items.size(), 50u);
  ASSERT_TRUE(third->CloseState().has_value());
}

// Writes nobody waits on (start-up manifests) skip the per-write sync; one Sync makes them all
// durable.
TEST_F(StateTest, UnsyncedWritesAreDurableAfterOneSync) {
  const std::string path = TempPath("state4.json");
  {
    util::VirtualClock clock(testing::kStartNs);
    auto s = NewBuiltinStore(clock, DefaultOptions());
    ASSERT_TRUE(s->OpenState(path).has_value());
    const ResourceType& pods = *s->FindResource("", "pods");
    {
      UnsyncedWrites unsynced;
      EXPECT_TRUE(UnsyncedWrites::Active());
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(s->Create(pods, "default", Doc(PodJson(fmt::format("u{}", i)))));
    }
    EXPECT_FALSE(UnsyncedWrites::Active());
    ASSERT_TRUE(s->Sync().has_value());
  }
  util::VirtualClock clock(testing::kStartNs);
  auto reopened = NewBuiltinStore(clock, DefaultOptions());
  ASSERT_TRUE(reopened->OpenState(path).has_value());
  EXPECT_EQ(reopened->List(*reopened->FindResource("", "pods"), "default", {})->items.size(), 100u);
  ASSERT_TRUE(reopened->CloseState().has_value());
}

TEST_F(StateTest, VersionsThatCouldWrapAreRefused) {
  const std::string path = TempPath("state2.json");
  {
    std::ofstream out(path);
    out << R"({"kind":"KubeschedStoreState","resourceVersion":"18446744073709551615","objects":[]})";
  }
  util::VirtualClock clock(testing::kStartNs);
  auto s = NewBuiltinStore(clock, DefaultOptions());
  const uint64_t before = s->ResourceVersion();  // the built-in namespaces
  auto opened = s->OpenState(path);
  ASSERT_FALSE(opened.has_value());
  EXPECT_EQ(opened.error().message, path + ": resourceVersion \"18446744073709551615\" is not a decimal number below " +
                                        std::to_string(9223372036854775807ULL - Journal::kMaxUnsynced));
  EXPECT_EQ(s->ResourceVersion(), before);  // nothing half-applied
}

// Stale temporary files of a save that was killed are removed when the state is opened.
TEST_F(StateTest, TemporariesOfAKilledSaveAreRemoved) {
  const std::string path = TempPath("state3.json");
  const std::string stale = (fs::path(path).parent_path() / ".state3.json.tmp-abc123").string();
  { std::ofstream(stale) << "half a state"; }
  util::VirtualClock clock(testing::kStartNs);
  auto s = NewBuiltinStore(clock, DefaultOptions());
  ASSERT_TRUE(s->OpenState(path).has_value());
  EXPECT_FALSE(fs::exists(stale));
  ASSERT_TRUE(s->CloseState().has_value());
}

// The journal is compacted while serving once it outgrows its bound, and a crash at any moment
// (the files copied as they are after a write returned) comes back with every write made so far.
TEST_F(StateTest, TheJournalIsCompactedOnlineAndEveryMomentIsRecoverable) {
  const std::string path = TempPath("state4.json");
  StoreOptions options = DefaultOptions();
  options.journal_compact_bytes = 16 * 1024;
  util::VirtualClock clock(testing::kStartNs);
  auto s = NewBuiltinStore(clock, options);
  ASSERT_TRUE(s->OpenState(path).has_value());
  const ResourceType& pods = *s->FindResource("", "pods");
  const fs::path crash_dir = fs::path(path).parent_path() / "crash";
  uint64_t largest_journal = 0;
  uint64_t last_size = 0;
  int shrank = 0;  // compactions seen
  for (int i = 0; i < 400; ++i) {
    ASSERT_TRUE(s->Create(pods, "default", Doc(PodJson(fmt::format("p{}", i)))).has_value());
    if (i % 3 == 0 && i > 0) {
      ASSERT_TRUE(s->Delete(pods, "default", fmt::format("p{}", i - 1), {.grace_period_seconds = 0}).has_value());
    }
    const uint64_t size = fs::file_size(path + ".journal");
    largest_journal = std::max(largest_journal, size);
    shrank += size < last_size ? 1 : 0;
    last_size = size;
    if (i % 40 != 39) continue;
    // A crash now: what is on disk, opened by a new process.
    fs::remove_all(crash_dir);
    fs::create_directories(crash_dir);
    for (const char* suffix : {"", ".journal", ".journal.next"}) {
      if (fs::exists(path + suffix)) fs::copy_file(path + suffix, crash_dir / ("state.json" + std::string(suffix)));
    }
    auto expected = s->List(pods, "default", {});
    ASSERT_TRUE(expected.has_value());
    auto recovered = NewBuiltinStore(clock, DefaultOptions());
    ASSERT_TRUE(recovered->OpenState((crash_dir / "state.json").string()).has_value()) << i;
    auto got = recovered->List(pods, "default", {});
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->items.size(), expected->items.size()) << "after write " << i;
    EXPECT_GE(recovered->ResourceVersion(), s->ResourceVersion());
    ASSERT_TRUE(recovered->CloseState().has_value());
  }
  // The journal is compacted once it holds more than the bound and the snapshot (so the work is
  // linear in the writes); without compaction it would hold all 533 writes.
  EXPECT_GE(shrank, 3);
  EXPECT_LT(largest_journal, fs::file_size(path) + options.journal_compact_bytes + 8192);
  EXPECT_FALSE(fs::exists(path + ".journal.next"));
  ASSERT_TRUE(s->CloseState().has_value());
  auto reopened = NewBuiltinStore(clock, DefaultOptions());
  ASSERT_TRUE(reopened->OpenState(path).has_value());
  EXPECT_EQ(reopened->List(pods, "default", {})->items.size(), 400u - 133u);
  ASSERT_TRUE(reopened->CloseState().has_value());
  fs::remove_all(crash_dir);
}

// A crash in the middle of a compaction leaves the old snapshot or the new one, the old journal,
// and the next journal: each combination opens with every change.
TEST_F(StateTest, ACrashInTheMiddleOfACompactionLosesNothing) {
  auto line = [](std::string_view type, std::string_view name, int rv) {
    return fmt::format(R"({{"type":"{}","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}",)"
                       R"("namespace":"default","resourceVersion":"{}"}}}}}})",
                       type, name, rv) +
           "\n";
  };
  auto object = [](std::string_view name, int rv) {
    return fmt::format(R"({{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}","namespace":"default",)"
                       R"("resourceVersion":"{}"}}}})",
                       name, rv);
  };
  const std::string old_journal = line("ADDED", "a", 1) + line("ADDED", "b", 2) + line("DELETED", "a", 3);
  const std::string next_journal = line("ADDED", "c", 4) + line("MODIFIED", "b", 5);
  const std::string old_snapshot = R"({"kind":"KubeschedStoreState","resourceVersion":"0","objects":[]})";
  const std::string new_snapshot =
      R"({"kind":"KubeschedStoreState","resourceVersion":"3","objects":[)" + object("b", 2) + "]}";
  for (const std::string& snapshot : {old_snapshot, new_snapshot}) {
    for (bool renamed : {false, true}) {
      if (renamed && snapshot == old_snapshot) continue;  // the rename comes after the snapshot
      const std::string path = TempPath("state5.json");
      std::ofstream(path) << snapshot;
      if (renamed) {
        std::ofstream(path + ".journal") << next_journal;
      } else {
        std::ofstream(path + ".journal") << old_journal;
        std::ofstream(path + ".journal.next") << next_journal;
      }
      util::VirtualClock clock(testing::kStartNs);
      auto s = NewBuiltinStore(clock, DefaultOptions());
      ASSERT_TRUE(s->OpenState(path).has_value());
      const ResourceType& maps = *s->FindResource("", "configmaps");
      EXPECT_FALSE(s->Get(maps, "default", "a").has_value());
      auto b = s->Get(maps, "default", "b");
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ((*b)->resource_version, 5u);
      EXPECT_TRUE(s->Get(maps, "default", "c").has_value());
      EXPECT_GE(s->ResourceVersion(), 5u + Journal::kMaxUnsynced);
      EXPECT_FALSE(fs::exists(path + ".journal.next"));
      ASSERT_TRUE(s->CloseState().has_value());
    }
  }
}

}  // namespace
}  // namespace kubesched::store
