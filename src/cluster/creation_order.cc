#include "cluster/creation_order.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>

namespace kubesched::cluster {

std::vector<size_t> SlowStartBatches(size_t n) {
  std::vector<size_t> batches;
  size_t size = 1;
  while (n > 0) {
    size_t take = std::min(size, n);
    batches.push_back(take);
    n -= take;
    size *= 2;
  }
  return batches;
}

std::vector<size_t> PodCreationOrder(const std::vector<PendingPodOrigin>& pods, CreationOrder order,
                                     std::mt19937_64& rng) {
  std::vector<size_t> out;
  out.reserve(pods.size());
  if (order == CreationOrder::kManifest) {
    out.resize(pods.size());
    std::iota(out.begin(), out.end(), size_t{0});
    return out;
  }
  // Controllers in order of first appearance, each with its pods split into batches.
  std::vector<std::vector<size_t>> controller_pods;
  std::map<std::string, size_t, std::less<>> controller_index;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i].controller.empty()) {
      out.push_back(i);
      continue;
    }
    auto [it, inserted] = controller_index.try_emplace(pods[i].controller, controller_pods.size());
    if (inserted) controller_pods.emplace_back();
    controller_pods[it->second].push_back(i);
  }
  struct Stream {
    const std::vector<size_t>* pods;
    std::deque<size_t> batches;
    size_t next = 0;
  };
  std::vector<Stream> streams;
  for (const auto& members : controller_pods) {
    auto sizes = SlowStartBatches(members.size());
    streams.push_back(Stream{&members, std::deque<size_t>(sizes.begin(), sizes.end()), 0});
  }
  // Uniform choice among the controllers with batches left. (A batch's creations run in parallel
  // too, but its pods are identical but for their names, so their order within it is kept.)
  while (!streams.empty()) {
    std::uniform_int_distribution<size_t> pick(0, streams.size() - 1);
    size_t s = pick(rng);
    Stream& stream = streams[s];
    size_t size = stream.batches.front();
    stream.batches.pop_front();
    for (size_t k = 0; k < size; ++k) out.push_back((*stream.pods)[stream.next++]);
    if (stream.batches.empty()) streams.erase(streams.begin() + static_cast<std::ptrdiff_t>(s));
  }
  return out;
}

}  // namespace kubesched::cluster
