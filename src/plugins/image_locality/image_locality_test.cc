// Mirrors upstream's imagelocality image_locality_test.go (TestImageLocalityPriority and
// TestNormalizedImageName).

#include "plugins/image_locality/image_locality.h"

#include <map>
#include <set>

#include <gtest/gtest.h>
#include "testing/builders.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::image_locality {
namespace {

constexpr int64_t kMb = 1024 * 1024;

using ImageList = std::vector<api::ContainerImage>;

std::shared_ptr<api::Node> ImageNode(std::string name, ImageList images) {
  auto node = testing::MakeNode().Name(std::move(name)).Obj();
  node->status.images = std::move(images);
  return node;
}

// Image states as the snapshot computes them: per normalized image name, its size and the number
// of nodes of the cluster holding it.
void SetImageStates(testing::FakeSnapshot& snapshot, const std::vector<std::shared_ptr<api::Node>>& nodes) {
  std::map<std::string, int> nodes_per_image;
  for (const auto& n : nodes) {
    std::set<std::string> seen;
    for (const auto& image : n->status.images) {
      for (const auto& name : image.names) seen.insert(framework::NormalizedImageName(name));
    }
    for (const auto& name : seen) ++nodes_per_image[name];
  }
  for (const auto& n : nodes) {
    std::map<std::string, framework::ImageStateSummary> states;
    for (const auto& image : n->status.images) {
      for (const auto& name : image.names) {
        std::string normalized = framework::NormalizedImageName(name);
        states[normalized] = {image.size_bytes, nodes_per_image[normalized]};
      }
    }
    snapshot.MutableNodeInfo(n->metadata.name)->set_image_states({states.begin(), states.end()});
  }
}

std::shared_ptr<api::Pod> PodWithImages(std::vector<std::string> containers, std::vector<std::string> init = {}) {
  auto pod = testing::MakePod().Name("p").Obj();
  auto add = [](std::vector<api::Container>& list, std::string image) {
    api::Container c;
    c.name = "c" + std::to_string(list.size());
    c.image = std::move(image);
    list.push_back(std::move(c));
  };
  for (auto& image : containers) add(pod->spec.containers, image);
  for (auto& image : init) add(pod->spec.init_containers, image);
  return pod;
}

TEST(ImageLocality, Score) {
  auto test40250 = PodWithImages({"gcr.io/40", "gcr.io/250"});
  auto test40300 = PodWithImages({"gcr.io/40", "gcr.io/300"});
  auto test_min_max = PodWithImages({"gcr.io/10", "gcr.io/4000"});
  auto test300600900 = PodWithImages({"gcr.io/300", "gcr.io/600", "gcr.io/900"});
  auto test3040 = PodWithImages({"gcr.io/30", "gcr.io/40"});
  auto test30_init300 = PodWithImages({"gcr.io/30"}, {"gcr.io/300"});

  const ImageList node403002000 = {{{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40 * kMb},
                                   {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * kMb},
                                   {{"gcr.io/2000:latest"}, 2000 * kMb}};
  const ImageList node25010 = {{{"gcr.io/250:latest"}, 250 * kMb}, {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * kMb}};
  const ImageList node60040900 = {
      {{"gcr.io/600:latest"}, 600 * kMb}, {{"gcr.io/40:latest"}, 40 * kMb}, {{"gcr.io/900:latest"}, 900 * kMb}};
  const ImageList node300600900 = {
      {{"gcr.io/300:latest"}, 300 * kMb}, {{"gcr.io/600:latest"}, 600 * kMb}, {{"gcr.io/900:latest"}, 900 * kMb}};
  const ImageList node400030 = {{{"gcr.io/4000:latest"}, 4000 * kMb}, {{"gcr.io/30:latest"}, 30 * kMb}};
  const ImageList node203040 = {
      {{"gcr.io/20:latest"}, 20 * kMb}, {{"gcr.io/30:latest"}, 30 * kMb}, {{"gcr.io/40:latest"}, 40 * kMb}};
  const ImageList no_images = {};

  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> pod;
    std::vector<std::shared_ptr<api::Node>> nodes;
    std::vector<std::pair<std::string, int64_t>> want;
  };
  std::vector<Case> cases = {
      // node1: 40M/2 < 23M -> 0; node2: 100 * (250M/2 - 23M) / (1000M*2 - 23M) = 5.
      {"two images spread on two nodes, prefer the larger image one",
       test40250,
       {ImageNode("node1", node403002000), ImageNode("node2", node25010)},
       {{"node1", 0}, {"node2", 5}}},
      // node1: 100 * ((40M + 300M)/2 - 23M) / (1000M*2 - 23M) = 7.
      {"two images on one node, prefer this node",
       test40300,
       {ImageNode("node1", node403002000), ImageNode("node2", node25010)},
       {{"node1", 7}, {"node2", 0}}},
      // node1: 4000M/2 >= 1000M*2 -> max; node2: 10M/2 < 23M -> 0.
      {"if exceed limit, use limit",
       test_min_max,
       {ImageNode("node1", node400030), ImageNode("node2", node25010)},
       {{"node1", 100}, {"node2", 0}}},
      // node1: 100 * (4000M/3 - 23M) / (1000M*2 - 23M) = 66.
      {"if exceed limit, use limit (with node which has no images present)",
       test_min_max,
       {ImageNode("node1", node400030), ImageNode("node2", node25010), ImageNode("node3", no_images)},
       {{"node1", 66}, {"node2", 0}, {"node3", 0}}},
      // node1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (1000M*3 - 23M) = 32;
      // node2: 100 * (300M/3 + 600M*2/3 + 900M*2/3 - 23M) / (1000M*3 - 23M) = 36.
      {"pod with multiple large images, node2 is preferred",
       test300600900,
       {ImageNode("node1", node60040900), ImageNode("node2", node300600900), ImageNode("node3", no_images)},
       {{"node1", 32}, {"node2", 36}, {"node3", 0}}},
      // node1: 100 * (30M + 40M/2 - 23M) / (1000M*2 - 23M) = 1; node2: (30M - 23M) ... = 0.
      {"pod with multiple small images",
       test3040,
       {ImageNode("node1", node203040), ImageNode("node2", node400030)},
       {{"node1", 1}, {"node2", 0}}},
      // node1: 100 * (300M/2 - 23M) / (1000M*2 - 23M) = 6; node2: 30M/2 < 23M -> 0.
      {"include InitContainers: two images spread on two nodes, prefer the larger image one",
       test30_init300,
       {ImageNode("node1", node403002000), ImageNode("node2", node203040)},
       {{"node1", 6}, {"node2", 0}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeHandle handle(c.nodes, {});
    SetImageStates(handle.snapshot(), c.nodes);
    auto created = New({}, handle);
    ASSERT_TRUE(created.has_value());
    auto* pl = dynamic_cast<framework::ScorePlugin*>(created->get());
    ASSERT_NE(pl, nullptr);
    EXPECT_EQ((*created)->Name(), "ImageLocality");
    EXPECT_EQ(pl->GetScoreExtensions(), nullptr);
    auto pod_info = framework::PodInfo::Create(c.pod);
    framework::CycleState state;
    std::vector<std::pair<std::string, int64_t>> got;
    for (const auto& n : c.nodes) {
      auto [score, status] = pl->Score(state, *pod_info, *handle.snapshot().Get(n->metadata.name));
      EXPECT_TRUE(status.IsSuccess()) << status.Message();
      got.emplace_back(n->metadata.name, score);
    }
    EXPECT_EQ(got, c.want);
  }
}

TEST(ImageLocality, ImageNamesWithTagsAndDigests) {
  // A tagged image matches only its own tag; an untagged one means :latest; digests match as is.
  const std::string digest = "gcr.io/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  std::vector<std::shared_ptr<api::Node>> nodes = {ImageNode("node1", {{{"gcr.io/app:v1", digest}, 1000 * kMb}}),
                                                   ImageNode("node2", {{{"gcr.io/app:latest"}, 1000 * kMb}})};
  testing::FakeHandle handle(nodes, {});
  SetImageStates(handle.snapshot(), nodes);
  auto created = New({}, handle);
  ASSERT_TRUE(created.has_value());
  auto* pl = dynamic_cast<framework::ScorePlugin*>(created->get());
  framework::CycleState state;
  auto score = [&](std::string image, std::string node) {
    return pl->Score(state, *framework::PodInfo::Create(PodWithImages({image})), *handle.snapshot().Get(node)).first;
  };
  // 1000M on 1 of 2 nodes: 100 * (500M - 23M) / (1000M - 23M) = 48.
  EXPECT_EQ(score("gcr.io/app:v1", "node1"), 48);
  EXPECT_EQ(score("gcr.io/app:v1", "node2"), 0);
  EXPECT_EQ(score("gcr.io/app", "node1"), 0);
  EXPECT_EQ(score("gcr.io/app", "node2"), 48);
  EXPECT_EQ(score(digest, "node1"), 48);
  // A registry with a port and no tag still gets :latest.
  EXPECT_EQ(score("gcr.io:5000/app", "node2"), 0);
}

TEST(ImageLocality, CalculatePriority) {
  EXPECT_EQ(CalculatePriority(0, 1), 0);
  EXPECT_EQ(CalculatePriority(kMinThreshold, 1), 0);
  EXPECT_EQ(CalculatePriority(kMaxContainerThreshold, 1), 100);
  EXPECT_EQ(CalculatePriority(5 * kMaxContainerThreshold, 2), 100);
  EXPECT_EQ(CalculatePriority(123 * kMb, 0), 0);  // a pod without containers scores 0
}

TEST(ImageLocality, NormalizedImageName) {
  // The shared helper the plugin relies on (upstream's TestNormalizedImageName).
  EXPECT_EQ(framework::NormalizedImageName("root"), "root:latest");
  EXPECT_EQ(framework::NormalizedImageName("gcr.io:5000/root"), "gcr.io:5000/root:latest");
  EXPECT_EQ(framework::NormalizedImageName("root:tag"), "root:tag");
  const std::string digest = "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
  EXPECT_EQ(framework::NormalizedImageName(digest), digest);
}

}  // namespace
}  // namespace kubesched::plugins::image_locality
