// libtorch's torch::data shapes over kiln (kiln::data::datasets, samplers, transforms): datasets
// and their map(), transforms, the samplers and their saved states. The loaders are in
// test_libtorch_loader.cpp.
#include "data_test.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ld = kiln::data;
namespace datasets = kiln::data::datasets;
namespace samplers = kiln::data::samplers;
namespace transforms = kiln::data::transforms;

namespace {

// Example i is 10 + i.
struct Tens : datasets::Dataset<Tens, int> {
  int get(size_t index) override { return 10 + static_cast<int>(index); }
  std::optional<size_t> size() const override { return 20; }
};

// Movable only: map() must move it along.
struct MoveOnly : datasets::Dataset<MoveOnly> {
  MoveOnly() = default;
  MoveOnly(MoveOnly&&) = default;
  MoveOnly(const MoveOnly&) = delete;
  ld::Example<> get(size_t index) override {
    auto v = kiln::tensor({static_cast<float>(index)});
    return {v, v};
  }
  std::optional<size_t> size() const override { return 8; }
};

// data [index] as a float tensor, target its decimal text.
struct Labelled : datasets::Dataset<Labelled, ld::Example<kiln::Tensor, std::string>> {
  ld::Example<kiln::Tensor, std::string> get(size_t index) override {
    return {kiln::tensor(static_cast<double>(index)), "#" + std::to_string(index)};
  }
  std::optional<size_t> size() const override { return 6; }
};

template <typename Target>
struct Negate : transforms::TensorTransform<Target> {
  kiln::Tensor operator()(kiln::Tensor input) override { return input.neg(); }
};

bool same(const kiln::Tensor& a, const kiln::Tensor& b) { return a.allclose(b); }

}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_datasets)

BOOST_AUTO_TEST_CASE(get_batch_gathers_get_in_request_order) {
  Tens d;
  BOOST_TEST(d.get_batch({3, 0, 7}) == (std::vector<int>{13, 10, 17}));
  BOOST_TEST(d.get_batch(std::vector<size_t>{}).empty());
  BOOST_TEST(!Tens::is_stateful);
}

BOOST_AUTO_TEST_CASE(transforms_by_example_and_by_batch) {
  struct Hex : transforms::Transform<int, std::string> {
    std::string apply(int x) override {
      std::ostringstream s;
      s << std::hex << x;
      return s.str();
    }
  };
  BOOST_TEST(Tens().map(Hex{}).get_batch({1, 5}) == (std::vector<std::string>{"b", "f"}));
  auto twice = Tens().map(transforms::Lambda<int>([](int x) { return 2 * x; }));
  BOOST_TEST(twice.get_batch({0, 2}) == (std::vector<int>{20, 24}));
  auto joined =
      Tens().map(transforms::BatchLambda<std::vector<int>, std::string>([](std::vector<int> v) {
        std::string s;
        for (int x : v) s += std::to_string(x) + ";";
        return s;
      }));
  BOOST_TEST(joined.get_batch({4, 1}) == "14;11;");
  auto product = Tens().map(transforms::Collate<int>([](std::vector<int> v) {
    return std::accumulate(v.begin(), v.end(), 1, std::multiplies<int>());
  }));
  BOOST_TEST(product.get_batch({0, 1, 2}) == 10 * 11 * 12);
  struct Largest : transforms::Collation<int> {
    int apply_batch(std::vector<int> v) override { return *std::max_element(v.begin(), v.end()); }
  };
  Tens lvalue;
  BOOST_TEST(lvalue.map(Largest{}).get_batch({2, 9, 4}) == 19);
}

BOOST_AUTO_TEST_CASE(map_moves_a_move_only_dataset_through_a_chain) {
  auto add = [](float k) {
    return transforms::TensorLambda<>([k](kiln::Tensor t) { return t + k; });
  };
  auto chain = MoveOnly().map(add(1)).map(add(10)).map(add(100));
  std::vector<ld::Example<>> batch = chain.get_batch({2, 5});
  BOOST_TEST(batch.size() == 2u);
  BOOST_TEST(batch[0].data.item<float>() == 113.f);
  BOOST_TEST(batch[1].data.item<float>() == 116.f);
  BOOST_TEST(batch[1].target.item<float>() == 5.f);  // the target is untouched
  BOOST_TEST(chain.size().value() == 8u);
}

BOOST_AUTO_TEST_CASE(tensor_dataset_rows_and_errors) {
  datasets::TensorDataset rows(kiln::eye(4));
  BOOST_TEST(rows.size().value() == 4u);
  BOOST_TEST(same(rows.get(1), kiln::tensor({0.f, 1.f, 0.f, 0.f})));
  datasets::TensorDataset stacked(kiln::eye(3).chunk(3));  // three [1, 3] tensors
  BOOST_TEST(same(stacked.get(2), kiln::tensor({{0.f, 0.f, 1.f}})));
  CHECK_ERROR(kiln::IndexError, rows.get(4), "index 4 is out of range for 4 rows");
  CHECK_ERROR(kiln::ValueError, datasets::TensorDataset(kiln::tensor(1.f)),
              "at least one dimension");
}

BOOST_AUTO_TEST_CASE(stack_collates_examples) {
  struct Pairs : datasets::Dataset<Pairs> {
    ld::Example<> get(size_t i) override {
      return {kiln::full({2}, static_cast<float>(i)), kiln::full({3}, -static_cast<float>(i))};
    }
    std::optional<size_t> size() const override { return 5; }
  };
  ld::Example<> batch = Pairs().map(transforms::Stack<ld::Example<>>()).get_batch({1, 4});
  BOOST_TEST(same(batch.data, kiln::tensor({{1.f, 1.f}, {4.f, 4.f}})));
  BOOST_TEST(same(batch.target, kiln::tensor({{-1.f, -1.f, -1.f}, {-4.f, -4.f, -4.f}})));
  ld::TensorExample rows = datasets::TensorDataset(kiln::eye(3))
                               .map(transforms::Stack<ld::TensorExample>())
                               .get_batch({2, 0});
  BOOST_TEST(same(rows.data, kiln::tensor({{0.f, 0.f, 1.f}, {1.f, 0.f, 0.f}})));
}

BOOST_AUTO_TEST_CASE(tensor_transforms_keep_any_target) {
  std::vector<ld::Example<kiln::Tensor, std::string>> a =
      Labelled().map(Negate<std::string>{}).get_batch({2, 3});
  BOOST_TEST(a[0].data.item<double>() == -2.0);
  BOOST_TEST(a[1].target == "#3");
  auto b = Labelled()
               .map(transforms::TensorLambda<std::string>([](kiln::Tensor t) { return t * 3; }))
               .get_batch({4});
  BOOST_TEST(b[0].data.item<double>() == 12.0);
  BOOST_TEST(b[0].target == "#4");
}

BOOST_AUTO_TEST_CASE(normalize_per_channel) {
  // data: `channels` channels of 4x4 filled with 2 (no channel dimension for 0), target channels
  struct Planes : datasets::Dataset<Planes, ld::Example<kiln::Tensor, int>> {
    ld::Example<kiln::Tensor, int> get(size_t channels) override {
      auto c = static_cast<int64_t>(channels);
      return {c == 0 ? kiln::full({4, 4}, 2.f) : kiln::full({c, 4, 4}, 2.f), static_cast<int>(c)};
    }
    std::optional<size_t> size() const override { return 4; }
  };
  auto one = Planes().map(transforms::Normalize<int>(1.0, 0.5)).get_batch({0, 1, 3});
  BOOST_TEST(same(one[0].data, kiln::full({4, 4}, 2.f)));  // (2 - 1) / 0.5
  BOOST_TEST(one[1].data.sizes().vec() == (std::vector<int64_t>{1, 4, 4}));
  BOOST_TEST(same(one[2].data, kiln::full({3, 4, 4}, 2.f)));
  BOOST_TEST(one[2].target == 3);
  auto per = Planes().map(transforms::Normalize<int>({0.0, 1.0, 4.0}, {1.0, 0.5, 4.0}));
  kiln::Tensor d = per.get_batch({3})[0].data;
  BOOST_TEST(same(d.select(0, 0), kiln::full({4, 4}, 2.f)));
  BOOST_TEST(same(d.select(0, 1), kiln::full({4, 4}, 2.f)));
  BOOST_TEST(same(d.select(0, 2), kiln::full({4, 4}, -0.5f)));
  CHECK_ERROR(kiln::ValueError, transforms::Normalize<>(0.5, 0.0), "stddev must be non-zero");
  CHECK_ERROR(kiln::ValueError, transforms::Normalize<>(std::vector<double>{}, 1.0),
              "mean must have at least one value");
}

BOOST_AUTO_TEST_CASE(shared_dataset_shares_one_object) {
  struct Counter : datasets::Dataset<Counter, int> {
    explicit Counter(int base) : base(base) {}
    Counter(Counter&&) = default;
    Counter(const Counter&) = delete;
    int get(size_t) override { return base + calls++; }
    std::optional<size_t> size() const override { return 3; }
    int base;
    int calls = 0;
  };
  auto shared = datasets::make_shared_dataset<Counter>(100);
  auto copy = shared;  // copies the pointer, not the dataset
  BOOST_TEST(shared.get_batch({0}) == std::vector<int>{100});
  BOOST_TEST(copy.get_batch({0}) == std::vector<int>{101});
  BOOST_TEST(shared->calls == 2);
  BOOST_TEST((*copy).base == 100);
  BOOST_TEST(datasets::make_shared_dataset<Counter>(Counter(7)).size().value() == 3u);
  CHECK_ERROR(kiln::ValueError, datasets::SharedBatchDataset<Counter>(nullptr), "is null");
}

BOOST_AUTO_TEST_CASE(stateful_dataset_maps_to_optional_batches) {
  struct Countdown : datasets::StatefulDataset<Countdown> {
    std::optional<std::vector<ld::Example<>>> get_batch(size_t n) override {
      if (left == 0) return std::nullopt;
      size_t k = std::min(n, left);
      left -= k;
      return std::vector<ld::Example<>>(k, ld::Example<>{kiln::ones({2}), kiln::zeros({1})});
    }
    std::optional<size_t> size() const override { return std::nullopt; }
    void reset() override { left = 7; }
    void save(kiln::serialize::OutputArchive&) const override {}
    void load(kiln::serialize::InputArchive&) override {}
    size_t left = 7;
  };
  auto stacked = Countdown().map(transforms::Stack<ld::Example<>>());
  static_assert(decltype(stacked)::is_stateful);
  std::optional<ld::Example<>> first = stacked.get_batch(5);
  BOOST_TEST(first->data.sizes().vec() == (std::vector<int64_t>{5, 2}));
  BOOST_TEST(stacked.get_batch(5)->target.sizes().vec() == (std::vector<int64_t>{2, 1}));
  BOOST_TEST(!stacked.get_batch(5).has_value());
  stacked.reset();
  BOOST_TEST(stacked.get_batch(10)->data.size(0) == 7);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(libtorch_samplers)

BOOST_AUTO_TEST_CASE(sequential_in_order_then_reset) {
  samplers::SequentialSampler s(7);
  BOOST_TEST(s.next(4).value() == (std::vector<size_t>{0, 1, 2, 3}));
  BOOST_TEST(s.index() == 4u);
  BOOST_TEST(s.next(10).value() == (std::vector<size_t>{4, 5, 6}));  // the rest
  BOOST_TEST(!s.next(1).has_value());
  s.reset();
  BOOST_TEST(s.next(2).value() == (std::vector<size_t>{0, 1}));
  s.reset(3);
  BOOST_TEST(s.next(5).value() == (std::vector<size_t>{0, 1, 2}));
  BOOST_TEST(!s.next(5).has_value());
  CHECK_ERROR(kiln::ValueError, s.next(0), "batch_size must be positive");
}

BOOST_AUTO_TEST_CASE(random_is_a_permutation_new_at_each_reset) {
  kiln::manual_seed(3);
  samplers::RandomSampler s(50);
  std::vector<size_t> all;
  while (auto batch = s.next(7)) {
    BOOST_TEST(batch->size() == (all.size() == 49 ? 1u : 7u));
    all.insert(all.end(), batch->begin(), batch->end());
  }
  std::vector<size_t> first = all;
  std::sort(all.begin(), all.end());
  std::vector<size_t> expected(50);
  std::iota(expected.begin(), expected.end(), size_t{0});
  BOOST_TEST(all == expected);
  s.reset();
  BOOST_TEST(s.next(50).value() != first);  // a new order
  s.reset(4);
  BOOST_TEST(s.next(9).value().size() == 4u);
  kiln::manual_seed(3);
  BOOST_TEST(samplers::RandomSampler(50).next(50).value() == first);  // reproducible
  CHECK_ERROR(kiln::ValueError, samplers::RandomSampler(-1), "size must be non-negative");
}

BOOST_AUTO_TEST_CASE(stream_gives_sizes_until_the_epoch_size) {
  samplers::StreamSampler s(30);
  BOOST_TEST(size_t(s.next(8).value()) == 8u);
  BOOST_TEST(s.next(20).value().size() == 20u);
  BOOST_TEST(size_t(s.next(8).value()) == 2u);
  BOOST_TEST(!s.next(8).has_value());
  s.reset(5);
  BOOST_TEST(size_t(s.next(8).value()) == 5u);
}

BOOST_AUTO_TEST_CASE(distributed_random_splits_padded_shuffled_indices) {
  // 11 samples on 4 ranks: 3 each with duplicates (indices 0 padded), 2 each without
  for (bool dup : {true, false}) {
    std::vector<size_t> all;
    std::vector<std::vector<size_t>> per_rank;
    for (size_t r = 0; r < 4; ++r) {
      samplers::DistributedRandomSampler s(11, 4, r, dup);
      s.set_epoch(5);
      s.reset();
      std::vector<size_t> mine;
      while (auto b = s.next(2)) mine.insert(mine.end(), b->begin(), b->end());
      BOOST_TEST(mine.size() == (dup ? 3u : 2u));
      per_rank.push_back(mine);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<size_t> expected(dup ? 11 : 8);
    std::iota(expected.begin(), expected.end(), size_t{0});
    if (dup) expected.insert(expected.begin(), 0);  // the padding repeats index 0
    BOOST_TEST(all == expected);
    samplers::DistributedRandomSampler again(11, 4, 1, dup);  // same epoch, same split
    again.set_epoch(5);
    again.reset();
    BOOST_TEST(again.next(10).value() == per_rank[1]);
  }
  samplers::DistributedRandomSampler one(30);
  std::vector<size_t> e0 = one.next(30).value();
  one.set_epoch(1);
  one.reset();
  BOOST_TEST(one.next(30).value() != e0);  // the epoch seeds the shuffle
  CHECK_ERROR(kiln::ValueError, samplers::DistributedRandomSampler(10, 2, 2), "rank 2 is out");
  CHECK_ERROR(kiln::ValueError, samplers::DistributedSequentialSampler(10, 0, 0),
              "num_replicas must be positive");
}

BOOST_AUTO_TEST_CASE(distributed_sequential_blocks) {
  samplers::DistributedSequentialSampler r2(10, 3, 2, /*allow_duplicates=*/true);
  BOOST_TEST(r2.next(3).value() == (std::vector<size_t>{8, 9, 0}));  // padded with 0, 1
  BOOST_TEST(r2.next(3).value() == (std::vector<size_t>{1}));
  BOOST_TEST(!r2.next(3).has_value());
  r2.reset();
  BOOST_TEST(r2.index() == 8u);
  samplers::DistributedSequentialSampler cut(10, 3, 2, /*allow_duplicates=*/false);
  BOOST_TEST(cut.next(9).value() == (std::vector<size_t>{6, 7, 8}));
  samplers::DistributedSequentialSampler whole(5);
  BOOST_TEST(whole.next(9).value() == (std::vector<size_t>{0, 1, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(saved_samplers_resume_where_they_were) {
  samplers::SequentialSampler a(12);
  a.next(5);
  std::stringstream sa;
  kiln::save(a, sa);
  samplers::SequentialSampler b(3);
  kiln::load(b, sa);
  BOOST_TEST(b.index() == 5u);
  BOOST_TEST(b.next(100).value().size() == 7u);  // its size came along

  samplers::RandomSampler r(20);
  r.next(6);
  std::stringstream sr;
  kiln::save(r, sr);
  samplers::RandomSampler q(20);
  kiln::load(q, sr);
  BOOST_TEST(q.index() == 6u);
  BOOST_TEST(q.next(20).value() == r.next(20).value());

  samplers::DistributedRandomSampler d(10, 2, 1);
  d.set_epoch(4);
  d.reset();
  d.next(2);
  std::stringstream sd;
  kiln::save(d, sd);
  samplers::DistributedRandomSampler e(10, 2, 1);
  kiln::load(e, sd);
  BOOST_TEST(e.epoch() == 4u);
  BOOST_TEST(e.index() == 7u);  // rank 1's block starts at 5
  BOOST_TEST(e.next(5).value() == d.next(5).value());

  samplers::DistributedSequentialSampler f(10);
  f.next(4);
  samplers::StreamSampler g(40);
  g.next(15);
  data_test::TempDir dir;
  std::string pf = dir / "f.safetensors", pg = dir / "g.safetensors";
  kiln::save(f, pf);
  kiln::save(g, pg);
  samplers::DistributedSequentialSampler f2(10);
  kiln::load(f2, pf);
  BOOST_TEST(f2.index() == 4u);
  samplers::StreamSampler g2(1);
  kiln::load(g2, pg);
  BOOST_TEST(size_t(g2.next(100).value()) == 25u);
}

BOOST_AUTO_TEST_CASE(loading_a_bad_state_names_the_field) {
  kiln::serialize::OutputArchive out;
  out.write("index", kiln::tensor(int64_t{9}));
  out.write("size", kiln::tensor(int64_t{4}));
  std::stringstream s1;
  out.save_to(s1);
  samplers::SequentialSampler a(4);
  CHECK_ERROR(kiln::ValueError, kiln::load(a, s1), "'index' 9 exceeds the size 4");
  BOOST_TEST(a.index() == 0u);  // unchanged

  kiln::serialize::OutputArchive perm;
  perm.write("index", kiln::tensor(int64_t{0}));
  perm.write("indices", kiln::tensor({int64_t{0}, int64_t{0}, int64_t{2}}));
  std::stringstream s2;
  perm.save_to(s2);
  samplers::RandomSampler r(3);
  CHECK_ERROR(kiln::ValueError, kiln::load(r, s2), "'indices' is not a permutation");

  kiln::serialize::OutputArchive wrong;
  wrong.write("index", kiln::tensor(1.5f));
  std::stringstream s3;
  wrong.save_to(s3);
  CHECK_ERROR(kiln::ValueError, kiln::load(a, s3), "'index' must be one int64");

  kiln::serialize::OutputArchive none;
  std::stringstream s4;
  none.save_to(s4);
  CHECK_ERROR(kiln::IndexError, kiln::load(a, s4), "no key 'index' in the archive (keys: none)");
  std::stringstream junk("not an archive at all");
  CHECK_ERROR(kiln::Error, kiln::load(a, junk), "the stream holds no valid archive");
}

BOOST_AUTO_TEST_SUITE_END()
