// Samplers: sequential, random (seeded, new each epoch), distributed (PyTorch's padding and
// drop_last), batches.
#include "data_test.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

using namespace kiln::data;

BOOST_AUTO_TEST_SUITE(samplers)

BOOST_AUTO_TEST_CASE(sequential_and_random) {
  BOOST_TEST(SequentialSampler(4).indices(0, 0) == (std::vector<int64_t>{0, 1, 2, 3}));
  RandomSampler r(100);
  std::vector<int64_t> a = r.indices(7, 0), b = r.indices(7, 0), c = r.indices(8, 0);
  BOOST_TEST(a == b);  // a function of the seed
  BOOST_TEST(a != c);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  BOOST_TEST(sorted == all);  // a permutation
  // its own seed: new order each epoch, the same for the same epoch
  RandomSampler own(50, false, std::nullopt, 123);
  BOOST_TEST(own.indices(1, 0) == own.indices(2, 0));
  BOOST_TEST(own.indices(1, 0) != own.indices(1, 1));
  RandomSampler repl(5, true, 20);
  std::vector<int64_t> d = repl.indices(3, 0);
  BOOST_TEST(d.size() == 20u);
  BOOST_TEST(*std::max_element(d.begin(), d.end()) < 5);
  CHECK_ERROR(kiln::ValueError, RandomSampler(5, false, 0), "num_samples should be a positive");
}

BOOST_AUTO_TEST_CASE(distributed_pads_like_pytorch) {
  // 10 samples, 4 replicas: 3 each, total 12, padded with indices 0 and 1
  std::vector<int64_t> seen;
  for (int r = 0; r < 4; ++r) {
    DistributedSampler s(10, 4, r, /*shuffle=*/false);
    BOOST_TEST(s.size() == 3);
    std::vector<int64_t> idx = s.indices(0, 0);
    seen.insert(seen.end(), idx.begin(), idx.end());
    if (r == 0) BOOST_TEST(idx == (std::vector<int64_t>{0, 4, 8}));
    if (r == 3) BOOST_TEST(idx == (std::vector<int64_t>{3, 7, 1}));
  }
  std::sort(seen.begin(), seen.end());
  BOOST_TEST(seen == (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // drop_last: ceil((10 - 4) / 4) = 2 each, the tail dropped
  DistributedSampler d(10, 4, 1, false, 0, /*drop_last=*/true);
  BOOST_TEST(d.size() == 2);
  BOOST_TEST(d.indices(0, 0) == (std::vector<int64_t>{1, 5}));
  // fewer samples than replicas: the list repeats
  BOOST_TEST(DistributedSampler(2, 5, 4, false).indices(0, 0) == (std::vector<int64_t>{0}));
  CHECK_ERROR(kiln::ValueError, DistributedSampler(10, 4, 4), "Invalid rank 4", "interval [0, 3]");
}

BOOST_AUTO_TEST_CASE(distributed_shuffle_agrees_across_ranks_and_changes_per_epoch) {
  std::set<int64_t> all;
  for (int r = 0; r < 3; ++r) {
    DistributedSampler s(9, 3, r, true, 42);
    for (int64_t i : s.indices(/*loader seed, ignored=*/r, 5)) all.insert(i);
  }
  BOOST_TEST(all.size() == 9u);  // disjoint shares of one permutation
  DistributedSampler s(9, 3, 0, true, 42);
  BOOST_TEST(s.indices(0, 0) != s.indices(0, 1));
  s.set_epoch(1);
  BOOST_TEST(s.indices(0, 0) == s.indices(0, 1));
}

BOOST_AUTO_TEST_CASE(batch_sampler_groups_and_drops) {
  auto seq = std::make_shared<SequentialSampler>(5);
  BatchSampler keep(seq, 2, false), drop(seq, 2, true);
  BOOST_TEST(keep.size() == 3);
  BOOST_TEST(drop.size() == 2);
  BOOST_TEST(keep.batches(0, 0).back() == (std::vector<int64_t>{4}));
  BOOST_TEST(drop.batches(0, 0).size() == 2u);
  CHECK_ERROR(kiln::ValueError, BatchSampler(seq, 0, false),
              "batch_size should be a positive integer value, but got batch_size=0");
}

BOOST_AUTO_TEST_CASE(sizes_near_the_int64_limit_do_not_overflow) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  auto ten = std::make_shared<SequentialSampler>(10);
  // (n + batch_size - 1) / batch_size overflowed: -1 batches
  auto ds = std::make_shared<LambdaDataset>(10, [](int64_t i) { return Sample(i); });
  BOOST_TEST(DataLoader(ds, DataLoaderOptions(max)).size() == 1);
  BOOST_TEST(DataLoader(ds, DataLoaderOptions(max).drop_last(true)).size() == 0);
  BOOST_TEST(BatchSampler(ten, max, false).size() == 1);
  BOOST_TEST(BatchSampler(ten, 3, false).size() == 4);
  BOOST_TEST(BatchSampler(ten, 3, true).size() == 3);
  // padding to a multiple of the replicas overflowed (size + num_replicas - 1)
  CHECK_ERROR(kiln::ValueError, DistributedSampler(max, 2, 0, false),
              "DistributedSampler: size 9223372036854775807 padded to a multiple of "
              "num_replicas 2 overflows int64");
  BOOST_TEST(DistributedSampler(max, 2, 1, false, 0, /*drop_last=*/true).size() == max / 2);
  // PyTorch's ceil((size - num_replicas) / num_replicas) with drop_last
  BOOST_TEST(DistributedSampler(10, 4, 0, false, 0, true).size() == 2);
  BOOST_TEST(DistributedSampler(3, 4, 0, false, 0, true).size() == 0);
  BOOST_TEST(DistributedSampler(8, 4, 0, false, 0, true).size() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
