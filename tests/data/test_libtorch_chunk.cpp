// libtorch's ChunkDataset over kiln: preloaders on the worker pool, the bounded cache, batches
// across chunk boundaries, epochs, options, errors, save/load, cross-chunk shuffling and a
// preprocessing policy.
#include "data_test.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ld = kiln::data;
namespace datasets = kiln::data::datasets;
namespace samplers = kiln::data::samplers;
namespace transforms = kiln::data::transforms;

namespace {

// Chunks of the given sizes holding consecutive numbers: {0..s0-1}, {s0..s0+s1-1}, ...
struct Runs : datasets::ChunkDataReader<int> {
  explicit Runs(std::vector<size_t> sizes) : sizes(std::move(sizes)) {}
  ChunkType read_chunk(size_t index) override {
    KILN_CHECK_INDEX(index < sizes.size(), "Runs: no chunk ", index);
    auto first = std::accumulate(sizes.begin(), sizes.begin() + static_cast<long>(index), 0);
    ChunkType chunk(sizes[index]);
    std::iota(chunk.begin(), chunk.end(), static_cast<int>(first));
    return chunk;
  }
  size_t chunk_count() override { return sizes.size(); }
  void reset() override {}
  std::vector<size_t> sizes;
};

using Sequential = samplers::SequentialSampler;
using RunsDataset = datasets::ChunkDataset<Runs, Sequential, Sequential>;

datasets::SharedBatchDataset<RunsDataset> runs(std::vector<size_t> sizes,
                                               datasets::ChunkDatasetOptions options) {
  return datasets::make_shared_dataset<RunsDataset>(Runs(std::move(sizes)), Sequential(0),
                                                    Sequential(0), options);
}

template <typename Loader>
std::vector<std::vector<int>> batches(Loader& loader) {
  std::vector<std::vector<int>> out;
  for (auto& batch : loader) out.push_back(batch);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_chunk)

BOOST_AUTO_TEST_CASE(options_are_checked) {
  using O = datasets::ChunkDatasetOptions;
  CHECK_ERROR(kiln::ValueError, O(0, 1, 1), "Preloader count is 0");
  CHECK_ERROR(kiln::ValueError, O(1, 0, 1), "Batch size is 0");
  CHECK_ERROR(kiln::ValueError, O(1, 1, 0), "Cache size is 0");
  CHECK_ERROR(kiln::ValueError, O(1, 8, 4), "Cache size is less than batch size");
  CHECK_ERROR(kiln::ValueError, O(1, 4, 8, 0), "cross_chunk_shuffle_count needs to be greater");
  O ok(2, 4);
  BOOST_TEST(ok.cache_size() == 2048u);
  CHECK_ERROR(kiln::ValueError, ok.batch_size(4096), "Cache size is less than batch size");
  BOOST_TEST(ok.batch_size() == 4u);  // a refused value changes nothing
  BOOST_TEST(ok.preloader_count(3).preloader_count() == 3u);
}

BOOST_AUTO_TEST_CASE(every_example_once_per_epoch) {
  const std::vector<size_t> sizes = {10, 5, 20};  // 35 examples
  for (size_t preloaders : {1, 2, 3}) {
    for (size_t batch : {5, 7}) {
      for (int64_t workers : {0, 2}) {
        auto dataset = runs(sizes, datasets::ChunkDatasetOptions(preloaders, batch));
        auto loader = ld::make_data_loader(
            dataset, ld::DataLoaderOptions(static_cast<int64_t>(batch)).workers(workers));
        for (int epoch = 0; epoch < 2; ++epoch) {
          std::vector<int> all;
          for (auto& b : batches(*loader)) {
            BOOST_TEST(b.size() == batch);  // 35 is a multiple of 5 and 7
            all.insert(all.end(), b.begin(), b.end());
          }
          std::vector<int> sorted = all;
          std::sort(sorted.begin(), sorted.end());
          std::vector<int> expected(35);
          std::iota(expected.begin(), expected.end(), 0);
          BOOST_TEST(sorted == expected, preloaders << " preloaders, batch " << batch << ", "
                                                    << workers << " workers, epoch " << epoch);
          if (preloaders == 1 && workers == 0) BOOST_TEST(all == expected);  // in order
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(batches_span_chunks_and_end_short) {
  // two chunks of 10: batch 17 gives 17 then 3; batch 30 gives the 20 there are
  auto small = runs({10, 10}, datasets::ChunkDatasetOptions(1, 17, 40));
  auto a = ld::make_data_loader(small, 17);
  std::vector<size_t> sizes;
  for (auto& b : batches(*a)) sizes.push_back(b.size());
  BOOST_TEST(sizes == (std::vector<size_t>{17, 3}));
  auto big = runs({10, 10}, datasets::ChunkDatasetOptions(1, 30, 40));
  auto b = ld::make_data_loader(big, 30);
  std::vector<std::vector<int>> all = batches(*b);
  BOOST_TEST(all.size() == 1u);
  BOOST_TEST(all[0].size() == 20u);
  // empty chunks give no batch at all
  auto empty = runs({0, 0}, datasets::ChunkDatasetOptions(2, 5));
  auto c = ld::make_data_loader(empty, 5);
  BOOST_TEST(batches(*c).empty());
}

BOOST_AUTO_TEST_CASE(get_batch_checks_its_use) {
  RunsDataset direct(Runs({4}), Sequential(0), Sequential(0), datasets::ChunkDatasetOptions(1, 2));
  CHECK_ERROR(kiln::Error, direct.get_batch(2), "call reset() before get_batch()");
  direct.reset();
  BOOST_TEST(direct.get_batch()->size() == 2u);
  CHECK_ERROR(kiln::ValueError, direct.get_batch(3),
              "The requested batch size does not match with the initialized batch size.\n The "
              "requested batch size is 3, while the dataset is created with batch size equal "
              "to 2");
  auto dataset = runs({10}, datasets::ChunkDatasetOptions(1, 5));
  auto loader = ld::make_data_loader(dataset, ld::DataLoaderOptions(6));
  CHECK_ERROR(kiln::ValueError, *loader->begin(), "The requested batch size is 6");
}

BOOST_AUTO_TEST_CASE(a_reader_error_reaches_the_caller) {
  struct Broken : datasets::ChunkDataReader<int> {
    ChunkType read_chunk(size_t index) override {
      if (index == 1) throw std::runtime_error("chunk 1 is corrupt");
      return ChunkType(4, static_cast<int>(index));
    }
    size_t chunk_count() override { return 3; }
    void reset() override {}
  };
  auto dataset =
      datasets::make_shared_dataset<datasets::ChunkDataset<Broken, Sequential, Sequential>>(
          Broken{}, Sequential(0), Sequential(0), datasets::ChunkDatasetOptions(1, 4));
  for (int64_t workers : {0, 2}) {
    auto loader = ld::make_data_loader(dataset, ld::DataLoaderOptions(4).workers(workers));
    int good = 0;
    bool failed = false;
    auto it = loader->begin();
    while (true) {
      try {
        if (it == loader->end()) break;
        ++good;
        ++it;
      } catch (const ld::WorkerException& e) {
        BOOST_TEST(std::string(e.what()) == "Caught exception in DataLoader worker thread. "
                                            "Original message: chunk 1 is corrupt");
        failed = true;
        ++it;  // the other chunks still come
      }
    }
    BOOST_TEST_CONTEXT("workers " << workers) {
      BOOST_TEST(failed);
      BOOST_TEST(good == 2);  // the error takes a position of its own, wherever it comes
    }
  }
}

BOOST_AUTO_TEST_CASE(chunk_sampler_and_a_map) {
  auto dataset = runs({10, 5, 20}, datasets::ChunkDatasetOptions(2, 5));
  Sequential& chunks = dataset->chunk_sampler();
  auto loader = ld::make_data_loader(
      dataset.map(transforms::BatchLambda<std::vector<int>, int>([](std::vector<int> b) {
        return std::accumulate(b.begin(), b.end(), 0);
      })),
      ld::DataLoaderOptions(5));
  BOOST_TEST(chunks.index() == 0u);
  int sum = 0;
  for (int s : *loader) sum += s;
  BOOST_TEST(sum == 34 * 35 / 2);
  BOOST_TEST(chunks.index() == 3u);  // every chunk was handed out
}

BOOST_AUTO_TEST_CASE(an_unread_epoch_does_not_hang) {
  // the cache (10) holds two batches: the preloaders wait for a reader that never comes
  auto dataset = runs({10, 5, 20}, datasets::ChunkDatasetOptions(2, 5, 10));
  auto loader = ld::make_data_loader(dataset, 5);
  auto it = loader->begin();
  BOOST_TEST(it->size() == 5u);
  auto again = loader->begin();  // a new epoch stops the waiting preloaders
  BOOST_TEST(again->size() == 5u);
}

BOOST_AUTO_TEST_CASE(load_resumes_from_the_saved_chunk) {
  data_test::TempDir dir;
  const std::string path = dir / "chunks.safetensors";
  Sequential at_two(3);
  at_two.next(2);  // chunks 0 and 1 done
  kiln::save(at_two, path);
  auto dataset = runs({10, 5, 20}, datasets::ChunkDatasetOptions(1, 10, 20));
  kiln::load(*dataset, path);
  auto loader = ld::make_data_loader(dataset, 10);
  std::vector<std::vector<int>> first = batches(*loader);  // chunk 2 only: 15 .. 34
  BOOST_TEST(first.size() == 2u);
  BOOST_TEST(first[0].front() == 15);
  BOOST_TEST(first[1].back() == 34);
  std::vector<std::vector<int>> second = batches(*loader);  // the next epoch is whole
  BOOST_TEST(second.size() == 4u);
  BOOST_TEST(second[3].size() == 5u);
  // a saved dataset is its chunk sampler's position
  kiln::save(*dataset, path);
  Sequential saved(0);
  kiln::load(saved, path);
  BOOST_TEST(saved.index() == 3u);
}

BOOST_AUTO_TEST_CASE(cross_chunk_shuffle_mixes_loaded_chunks) {
  // An example sampler that interleaves: for n examples in groups of 5, it yields k, k + 5, ...
  // so examples of different chunks (each chunk of 5 holds its own index) alternate.
  struct Interleave : samplers::Sampler<> {
    void reset(std::optional<size_t> n) override {
      order.clear();
      size_t size = n.value_or(0), groups = size / 5;
      for (size_t k = 0; k < 5; ++k) {
        for (size_t g = 0; g < groups; ++g) order.push_back(k + 5 * g);
      }
      at = 0;
    }
    std::optional<std::vector<size_t>> next(size_t n) override {
      if (at >= order.size()) return std::nullopt;
      size_t k = std::min(n, order.size() - at);
      std::vector<size_t> out(order.begin() + static_cast<long>(at),
                              order.begin() + static_cast<long>(at + k));
      at += k;
      return out;
    }
    void save(kiln::serialize::OutputArchive&) const override {}
    void load(kiln::serialize::InputArchive&) override {}
    std::vector<size_t> order;
    size_t at = 0;
  };
  struct Labels : datasets::ChunkDataReader<int> {
    ChunkType read_chunk(size_t index) override { return ChunkType(5, static_cast<int>(index)); }
    size_t chunk_count() override { return 5; }
    void reset() override {}
  };
  using D = datasets::ChunkDataset<Labels, Sequential, Interleave>;
  auto dataset = datasets::make_shared_dataset<D>(Labels{}, Sequential(0), Interleave{},
                                                  datasets::ChunkDatasetOptions(1, 5, 10, 2));
  auto loader = ld::make_data_loader(dataset, 5);
  std::vector<int> all;
  for (auto& b : *loader) all.insert(all.end(), b.begin(), b.end());
  // chunks loaded two at a time (0+1, 2+3, 4) and interleaved
  std::vector<int> expected;
  for (int pair = 0; pair < 2; ++pair) {
    for (int k = 0; k < 5; ++k) {
      expected.push_back(2 * pair);
      expected.push_back(2 * pair + 1);
    }
  }
  for (int k = 0; k < 5; ++k) expected.push_back(4);
  BOOST_TEST(all == expected);
}

BOOST_AUTO_TEST_CASE(preprocessing_policy_sees_each_loaded_group) {
  struct Descending : datasets::ChunkDataReader<int> {
    ChunkType read_chunk(size_t index) override {
      ChunkType c(5);
      for (size_t i = 0; i < 5; ++i) c[i] = static_cast<int>(100 * index + 10 - i);
      return c;
    }
    size_t chunk_count() override { return 4; }
    void reset() override {}
  };
  using D = datasets::ChunkDataset<Descending, Sequential, Sequential>;
  auto sort = [](std::vector<int>& v) { std::sort(v.begin(), v.end()); };
  auto dataset = datasets::make_shared_dataset<D>(Descending{}, Sequential(0), Sequential(0),
                                                  datasets::ChunkDatasetOptions(1, 10, 10, 2),
                                                  sort);
  auto loader = ld::make_data_loader(dataset, 10);
  std::vector<std::vector<int>> got = batches(*loader);
  BOOST_TEST(got.size() == 2u);
  for (auto& b : got) BOOST_TEST(std::is_sorted(b.begin(), b.end()));  // a group of 2 chunks
  BOOST_TEST(got[1].front() == 206);
}

BOOST_AUTO_TEST_SUITE_END()
