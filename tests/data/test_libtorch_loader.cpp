// libtorch's make_data_loader over kiln's worker pool: options, iterators, batching, workers
// (copies, ordering, errors, timeouts), stateful datasets, join and misuse. ChunkDataset is in
// test_libtorch_chunk.cpp.
#include "data_test.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace ld = kiln::data;
namespace datasets = kiln::data::datasets;
namespace samplers = kiln::data::samplers;
namespace transforms = kiln::data::transforms;
using namespace std::chrono_literals;

namespace {

// Example i is 1000 + i; `n` examples.
struct Numbers : datasets::Dataset<Numbers, int> {
  explicit Numbers(size_t n = 60) : n(n) {}
  int get(size_t index) override { return 1000 + static_cast<int>(index); }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};

// A latch: wait() returns once open() was called (or after `limit`).
struct Latch {
  std::mutex mutex;
  std::condition_variable cv;
  bool is_open = false;
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      is_open = true;
    }
    cv.notify_all();
  }
  bool wait(std::chrono::milliseconds limit = 5000ms) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, limit, [&] { return is_open; });
  }
};

// Ends after `limit` single-value batches; thread-safe.
struct Countdown : datasets::StatefulDataset<Countdown, int, size_t> {
  explicit Countdown(int limit = 9) : limit(limit) {}
  Countdown(Countdown&& other) noexcept : limit(other.limit), next(other.next) {}
  std::optional<int> get_batch(size_t) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (next >= limit) return std::nullopt;
    return next++;
  }
  std::optional<size_t> size() const override { return std::nullopt; }
  void reset() override {
    std::lock_guard<std::mutex> lock(mutex);
    next = 0;
    ++resets;
  }
  void save(kiln::serialize::OutputArchive&) const override {}
  void load(kiln::serialize::InputArchive&) override {}
  int limit;
  int next = 0;
  int resets = 0;
  std::mutex mutex;
};

template <typename Loader>
std::vector<int> flatten(Loader& loader) {
  std::vector<int> out;
  for (auto& batch : loader) out.insert(out.end(), batch.begin(), batch.end());
  return out;
}

std::vector<int> range(int first, int count) {
  std::vector<int> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(libtorch_loader)

BOOST_AUTO_TEST_CASE(options_fill_in_libtorch_defaults_and_are_checked) {
  ld::FullDataLoaderOptions defaults{ld::DataLoaderOptions()};
  BOOST_TEST(defaults.batch_size == 1u);
  BOOST_TEST(defaults.workers == 0u);
  BOOST_TEST(defaults.max_jobs == 0u);
  BOOST_TEST(!defaults.timeout.has_value());
  BOOST_TEST(defaults.enforce_ordering);
  BOOST_TEST(!defaults.drop_last);
  ld::FullDataLoaderOptions set{ld::DataLoaderOptions(16).workers(3).timeout(20ms)};
  BOOST_TEST(set.batch_size == 16u);
  BOOST_TEST(set.max_jobs == 6u);  // 2 x workers
  BOOST_TEST(set.timeout->count() == 20);
  BOOST_TEST(ld::FullDataLoaderOptions(ld::DataLoaderOptions().workers(2).max_jobs(1)).max_jobs ==
             1u);
  using VE = kiln::ValueError;
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions().batch_size(std::nullopt)),
              "batch_size must be set");
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions(0)), "positive, got 0");
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions().workers(-1)),
              "workers must be non-negative");
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions().workers(2).max_jobs(0)),
              "max_jobs must be positive with 2 workers");
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions().shuffle(true)),
              "DataLoaderOptions::shuffle is an option of kiln::data::DataLoader");
  CHECK_ERROR(VE, ld::FullDataLoaderOptions(ld::DataLoaderOptions().timeout(-1ms)),
              "timeout must be non-negative");
  // and kiln's own DataLoader refuses libtorch's max_jobs
  auto kiln_ds = std::make_shared<ld::LambdaDataset>(4, [](int64_t i) { return ld::Sample(i); });
  CHECK_ERROR(VE, ld::DataLoader(kiln_ds, ld::DataLoaderOptions().max_jobs(2)),
              "takes prefetch_factor");
}

BOOST_AUTO_TEST_CASE(make_data_loader_defaults) {
  auto loader =
      ld::make_data_loader(Numbers(5).map(transforms::Lambda<int>([](int x) { return -x; })));
  BOOST_TEST(loader->options().batch_size == 1u);
  std::vector<int> got = flatten(*loader);
  std::sort(got.begin(), got.end());
  BOOST_TEST(got == (std::vector<int>{-1004, -1003, -1002, -1001, -1000}));  // a permutation
  struct Unsized : datasets::Dataset<Unsized, int> {
    int get(size_t) override { return 0; }
    std::optional<size_t> size() const override { return std::nullopt; }
  };
  CHECK_ERROR(kiln::Error, ld::make_data_loader(Unsized{}),
              "Expected the dataset to be sized in order to construct the Sampler");
}

BOOST_AUTO_TEST_CASE(iterators_compare_as_libtorch_ones) {
  auto loader = ld::make_data_loader<samplers::SequentialSampler>(Numbers(40), 20);
  auto a = loader->begin();
  BOOST_CHECK(a == a);
  BOOST_CHECK(loader->end() == loader->end());
  auto copy = a;
  BOOST_CHECK(copy == a);  // copies share the position
  BOOST_CHECK(a != loader->end());
  BOOST_TEST((*a).front() == 1000);
  BOOST_TEST((*a).front() == 1000);  // dereferencing again does not advance
  ++copy;
  BOOST_TEST(a->front() == 1020);
  ++a;
  BOOST_CHECK(a == loader->end());
  BOOST_CHECK(copy == loader->end());
  CHECK_ERROR(kiln::Error, ++a, "Attempted to increment iterator past the end");
  CHECK_ERROR(kiln::Error, *a, "Attempted to dereference iterator that was past the end");
  auto sentinel = loader->end();
  CHECK_ERROR(kiln::Error, ++sentinel, "Incrementing the DataLoader's past-the-end iterator");
  CHECK_ERROR(kiln::Error, *sentinel, "Dereferencing the DataLoader's past-the-end iterator");
  // without workers a new begin() ends the earlier iterator
  auto i = loader->begin();
  auto j = loader->begin();
  BOOST_CHECK(i != j);
  BOOST_TEST(j->front() == 1000);
  CHECK_ERROR(kiln::Error, *i, "this iterator's epoch was ended by a later begin()");
}

BOOST_AUTO_TEST_CASE(iterator_works_with_standard_algorithms) {
  struct Firsts : datasets::BatchDataset<Firsts, int> {
    int get_batch(kiln::ArrayRef<size_t> indices) override {
      return 7 * static_cast<int>(*indices.begin());
    }
    std::optional<size_t> size() const override { return 6; }
  };
  auto loader = ld::make_data_loader<samplers::SequentialSampler>(Firsts{}, 1);
  std::vector<int> values;
  std::copy(loader->begin(), loader->end(), std::back_inserter(values));
  BOOST_TEST(values == (std::vector<int>{0, 7, 14, 21, 28, 35}));
  BOOST_TEST(std::distance(loader->begin(), loader->end()) == 6);
}

BOOST_AUTO_TEST_CASE(batch_sizes_and_drop_last) {
  for (size_t workers : {0, 3}) {
    auto keep = ld::make_data_loader<samplers::SequentialSampler>(
        Numbers(50), ld::DataLoaderOptions(15).workers(static_cast<int64_t>(workers)));
    std::vector<size_t> sizes;
    for (auto& batch : *keep) sizes.push_back(batch.size());
    BOOST_TEST(sizes == (std::vector<size_t>{15, 15, 15, 5}));
    auto drop = ld::make_data_loader<samplers::SequentialSampler>(
        Numbers(50),
        ld::DataLoaderOptions(15).drop_last(true).workers(static_cast<int64_t>(workers)));
    BOOST_TEST(flatten(*drop) == range(1000, 45));
    BOOST_TEST(flatten(*drop) == range(1000, 45));  // every epoch the same
  }
}

BOOST_AUTO_TEST_CASE(each_worker_gets_one_copy_of_the_dataset) {
  struct Copies : datasets::Dataset<Copies, int> {
    explicit Copies(std::shared_ptr<std::atomic<int>> c) : copies(std::move(c)) {}
    Copies(const Copies& other) : copies(other.copies) { ++*copies; }
    Copies(Copies&&) = default;
    int get(size_t i) override { return static_cast<int>(i); }
    std::optional<size_t> size() const override { return 30; }
    std::shared_ptr<std::atomic<int>> copies;
  };
  auto copies = std::make_shared<std::atomic<int>>(0);
  auto loader = ld::make_data_loader(Copies(copies), ld::DataLoaderOptions(4).workers(3));
  BOOST_TEST(copies->load() == 3);
  std::vector<int> got = flatten(*loader);
  std::sort(got.begin(), got.end());
  BOOST_TEST(got == range(0, 30));
  BOOST_TEST(copies->load() == 3);  // none per batch
  auto inline_loader = ld::make_data_loader(Copies(copies), 4);
  BOOST_TEST(copies->load() == 3);  // none without workers
}

BOOST_AUTO_TEST_CASE(a_dataset_that_cannot_be_copied_is_shared) {
  struct Unique : datasets::Dataset<Unique, int> {
    Unique() = default;
    Unique(Unique&&) = default;
    Unique(const Unique&) = delete;
    int get(size_t i) override { return static_cast<int>(i) * 2; }
    std::optional<size_t> size() const override { return 12; }
  };
  CHECK_ERROR(kiln::ValueError, ld::make_data_loader(Unique(), ld::DataLoaderOptions().workers(2)),
              "wrap it with datasets::make_shared_dataset");
  auto loader = ld::make_data_loader(datasets::make_shared_dataset<Unique>(),
                                     ld::DataLoaderOptions(5).workers(3));
  std::vector<int> got = flatten(*loader);
  std::sort(got.begin(), got.end());
  BOOST_TEST(got.size() == 12u);
  BOOST_TEST(got.back() == 22);
}

BOOST_AUTO_TEST_CASE(enforce_ordering_reorders_what_workers_finish_out_of_order) {
  // Batch k waits until batch k + 1 is done (the last is immediate), so the workers finish in
  // reverse order; the loader still delivers 0, 1, 2, ...
  static constexpr int kBatches = 5;
  auto done = std::make_shared<std::vector<Latch>>(kBatches);
  struct Reverse : datasets::BatchDataset<Reverse, int> {
    explicit Reverse(std::shared_ptr<std::vector<Latch>> d) : done(std::move(d)) {}
    int get_batch(kiln::ArrayRef<size_t> indices) override {
      size_t k = *indices.begin();
      if (k + 1 < done->size()) (*done)[k + 1].wait();
      (*done)[k].open();
      return static_cast<int>(k);
    }
    std::optional<size_t> size() const override { return kBatches; }
    std::shared_ptr<std::vector<Latch>> done;
  };
  auto loader = ld::make_data_loader(Reverse(done), samplers::SequentialSampler(kBatches),
                                     ld::DataLoaderOptions(1).workers(kBatches));
  std::vector<int> got;
  for (int v : *loader) got.push_back(v);
  BOOST_TEST(got == range(0, kBatches));
}

BOOST_AUTO_TEST_CASE(without_ordering_batches_come_as_workers_finish) {
  // Batch 0 waits until the caller has received batch 1.
  auto received = std::make_shared<Latch>();
  struct Slow : datasets::BatchDataset<Slow, int> {
    explicit Slow(std::shared_ptr<Latch> r) : received(std::move(r)) {}
    int get_batch(kiln::ArrayRef<size_t> indices) override {
      if (*indices.begin() == 0) received->wait();
      return static_cast<int>(*indices.begin());
    }
    std::optional<size_t> size() const override { return 2; }
    std::shared_ptr<Latch> received;
  };
  auto loader = ld::make_data_loader(
      Slow(received), samplers::SequentialSampler(2),
      ld::DataLoaderOptions(1).workers(2).enforce_ordering(false).timeout(10000ms));
  auto it = loader->begin();
  BOOST_TEST(*it == 1);
  received->open();
  ++it;
  BOOST_TEST(*it == 0);
}

BOOST_AUTO_TEST_CASE(worker_exceptions_reach_the_caller) {
  struct Bad : datasets::Dataset<Bad, int> {
    int get(size_t index) override {
      if (index == 3) throw std::invalid_argument("index three is poisoned");
      return static_cast<int>(index);
    }
    std::optional<size_t> size() const override { return 8; }
  };
  auto loader =
      ld::make_data_loader<samplers::SequentialSampler>(Bad{}, ld::DataLoaderOptions(2).workers(2));
  auto it = loader->begin();
  BOOST_TEST(it->front() == 0);
  try {
    ++it;
    BOOST_ERROR("expected a WorkerException");
  } catch (const ld::WorkerException& e) {
    BOOST_TEST(std::string(e.what()) ==
               "Caught exception in DataLoader worker thread. Original message: index three "
               "is poisoned");
    BOOST_CHECK_THROW(std::rethrow_exception(e.original_exception), std::invalid_argument);
  }
  ++it;  // the loader goes on with the next batch
  BOOST_TEST(it->front() == 4);
  // without workers the dataset's exception propagates as it is
  auto inline_loader = ld::make_data_loader<samplers::SequentialSampler>(Bad{}, 4);
  BOOST_CHECK_THROW(*inline_loader->begin(), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(an_error_takes_a_position_of_its_own_even_the_first) {
  // The first batch raises: the ++ after catching it moves to the second batch, not past it
  // (it used to load the second batch and skip it at once).
  struct FirstBad : datasets::Dataset<FirstBad, int> {
    int get(size_t index) override {
      if (index < 2) throw std::invalid_argument("the first batch is poisoned");
      return static_cast<int>(index);
    }
    std::optional<size_t> size() const override { return 6; }
  };
  for (size_t workers : {0, 2}) {
    BOOST_TEST_CONTEXT("workers " << workers) {
      auto loader = ld::make_data_loader<samplers::SequentialSampler>(
          FirstBad{}, ld::DataLoaderOptions(2).workers(workers));
      std::vector<int> firsts;
      int errors = 0;
      auto it = loader->begin();
      while (true) {
        try {
          if (it == loader->end()) break;
          firsts.push_back(it->front());
          ++it;
        } catch (const std::exception&) {
          ++errors;
          BOOST_TEST((it != loader->end()));  // the failed position is not the end
          CHECK_ERROR(kiln::Error, *it, "whose batch failed to load");
          ++it;
        }
      }
      BOOST_TEST(errors == 1);
      BOOST_TEST(firsts == (std::vector<int>{2, 4}), boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_batch_that_takes_too_long_times_out) {
  auto release = std::make_shared<Latch>();
  struct Stuck : datasets::Dataset<Stuck, int> {
    explicit Stuck(std::shared_ptr<Latch> r) : release(std::move(r)) {}
    int get(size_t) override {
      release->wait(2000ms);
      return 0;
    }
    std::optional<size_t> size() const override { return 10; }
    std::shared_ptr<Latch> release;
  };
  auto start = std::chrono::steady_clock::now();
  {
    auto loader =
        ld::make_data_loader(Stuck(release), ld::DataLoaderOptions().workers(1).timeout(30ms));
    CHECK_ERROR(kiln::Error, *loader->begin(), "Timeout in DataLoader queue while waiting for ",
                "next batch (timeout was 30 ms)");
    release->open();
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() < 1500);
}

BOOST_AUTO_TEST_CASE(a_stuck_worker_is_abandoned_not_waited_for) {
  // The dataset blocks until released; the loader (timeout 20 ms) is destroyed meanwhile: it
  // returns at once, leaving the thread to end on its own with its own copy of the dataset.
  auto release = std::make_shared<Latch>();
  auto entered = std::make_shared<Latch>();
  struct Blocking : datasets::Dataset<Blocking, int> {
    Blocking(std::shared_ptr<Latch> e, std::shared_ptr<Latch> r)
        : entered(std::move(e)), release(std::move(r)) {}
    int get(size_t i) override {
      entered->open();
      release->wait(10000ms);
      return static_cast<int>(i);
    }
    std::optional<size_t> size() const override { return 4; }
    std::shared_ptr<Latch> entered, release;
  };
  int64_t before = ld::abandoned_workers();
  auto start = std::chrono::steady_clock::now();
  {
    auto loader = ld::make_data_loader(Blocking(entered, release),
                                       ld::DataLoaderOptions().workers(1).timeout(20ms));
    auto it = loader->begin();
    BOOST_TEST(entered->wait());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() < 2000);
  BOOST_TEST(ld::abandoned_workers() == before + 1);
  release->open();
  for (int i = 0; i < 500 && ld::abandoned_workers() != before; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  BOOST_TEST(ld::abandoned_workers() == before);  // it ended on its own
}

BOOST_AUTO_TEST_CASE(begin_while_an_epoch_is_in_flight_raises_with_workers) {
  auto loader = ld::make_data_loader(Numbers(), ld::DataLoaderOptions(4).workers(2));
  auto it = loader->begin();
  CHECK_ERROR(kiln::Error, loader->begin(),
              "Attempted to get a new DataLoader iterator while another iterator is not yet "
              "exhausted");
  while (it != loader->end()) ++it;
  BOOST_CHECK(loader->begin() != loader->end());  // after the end: fine
  { auto abandoned = loader->begin(); }
  BOOST_TEST(flatten(*loader).size() == 60u);  // a broken-off epoch left no iterator: fine
}

BOOST_AUTO_TEST_CASE(join_stops_the_loader) {
  for (int64_t workers : {0, 2}) {
    auto loader = ld::make_data_loader(Numbers(), ld::DataLoaderOptions(4).workers(workers));
    auto it = loader->begin();
    BOOST_TEST(it->size() == 4u);
    loader->join();
    loader->join();  // idempotent
    CHECK_ERROR(kiln::Error, ++it, "after join()");
    CHECK_ERROR(kiln::Error, loader->begin(), "begin() after join()");
  }
  ld::Iterator<std::vector<int>> orphan;
  {
    auto loader = ld::make_data_loader(Numbers(), 4);
    orphan = loader->begin();
  }
  CHECK_ERROR(kiln::Error, *orphan, "used after its loader was destroyed");
}

BOOST_AUTO_TEST_CASE(join_from_another_thread_wakes_a_waiting_iterator) {
  auto entered = std::make_shared<Latch>();
  auto release = std::make_shared<Latch>();
  struct Held : datasets::Dataset<Held, int> {
    Held(std::shared_ptr<Latch> e, std::shared_ptr<Latch> r)
        : entered(std::move(e)), release(std::move(r)) {}
    int get(size_t) override {
      entered->open();
      release->wait();
      return 0;
    }
    std::optional<size_t> size() const override { return 2; }
    std::shared_ptr<Latch> entered, release;
  };
  auto loader = ld::make_data_loader(Held(entered, release), ld::DataLoaderOptions().workers(1));
  std::string error;
  std::thread reader([&] {
    try {
      (void)*loader->begin();
    } catch (const kiln::Error& e) {
      error = e.what();
    }
  });
  BOOST_TEST(entered->wait());
  std::thread releaser([&] {
    std::this_thread::sleep_for(50ms);
    release->open();
  });
  loader->join();  // wakes the reader; waits for the worker until it is released
  reader.join();
  releaser.join();
  BOOST_TEST(kiln_test::contains(error, "after join()"), error);  // woken, or not yet waiting
}

BOOST_AUTO_TEST_CASE(one_loader_is_iterated_by_one_thread_at_a_time) {
  auto inside = std::make_shared<Latch>();
  auto release = std::make_shared<Latch>();
  struct Gate : datasets::Dataset<Gate, int> {
    Gate(std::shared_ptr<Latch> i, std::shared_ptr<Latch> r)
        : inside(std::move(i)), release(std::move(r)) {}
    int get(size_t) override {
      inside->open();
      release->wait();
      return 1;
    }
    std::optional<size_t> size() const override { return 3; }
    std::shared_ptr<Latch> inside, release;
  };
  auto loader = ld::make_data_loader(Gate(inside, release), 1);
  auto it = loader->begin();
  std::thread reader([&] { (void)*it; });
  BOOST_TEST(inside->wait());
  CHECK_ERROR(kiln::Error, loader->begin(), "iterated from two threads at once");
  release->open();
  reader.join();
  BOOST_TEST(*it == std::vector<int>{1});
}

BOOST_AUTO_TEST_CASE(stream_dataset_with_stream_sampler) {
  struct Counter : datasets::StreamDataset<Counter, std::vector<int>> {
    std::vector<int> get_batch(size_t n) override {
      std::vector<int> out(n);
      for (int& v : out) v = next++;
      return out;
    }
    std::optional<size_t> size() const override { return std::nullopt; }
    int next = 0;
  };
  auto loader =
      ld::make_data_loader(Counter().map(transforms::Lambda<int>([](int x) { return x * 10; })),
                           samplers::StreamSampler(25), 10);
  std::vector<size_t> sizes;
  std::vector<int> all;
  for (auto& batch : *loader) {
    sizes.push_back(batch.size());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  BOOST_TEST(sizes == (std::vector<size_t>{10, 10, 5}));
  BOOST_TEST(all.back() == 240);
}

BOOST_AUTO_TEST_CASE(custom_batch_request_type) {
  struct Window : samplers::CustomBatchRequest {
    Window(size_t first, size_t count) : first(first), count(count) {}
    size_t size() const override { return count; }
    size_t first, count;
  };
  struct Windows : samplers::Sampler<Window> {
    void reset(std::optional<size_t>) override { at = 0; }
    std::optional<Window> next(size_t n) override {
      if (at >= 9) return std::nullopt;
      Window w(at, std::min(n, 9 - at));
      at += w.count;
      return w;
    }
    void save(kiln::serialize::OutputArchive&) const override {}
    void load(kiln::serialize::InputArchive&) override {}
    size_t at = 0;
  };
  struct Sums : datasets::BatchDataset<Sums, int, Window> {
    int get_batch(Window w) override {
      int s = 0;
      for (size_t i = w.first; i < w.first + w.count; ++i) s += static_cast<int>(i);
      return s;
    }
    std::optional<size_t> size() const override { return 9; }
  };
  auto loader = ld::make_data_loader(Sums{}, Windows{}, ld::DataLoaderOptions(4).workers(2));
  std::vector<int> got(loader->begin(), loader->end());
  BOOST_TEST(got == (std::vector<int>{0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8}));
}

BOOST_AUTO_TEST_CASE(stateful_dataset_epochs) {
  for (int64_t workers : {0, 4}) {
    auto shared = datasets::make_shared_dataset<Countdown>(9);
    auto loader = ld::make_data_loader(shared, ld::DataLoaderOptions().workers(workers));
    for (int epoch = 0; epoch < 4; ++epoch) {
      std::vector<int> got(loader->begin(), loader->end());
      std::sort(got.begin(), got.end());
      BOOST_TEST(got == range(0, 9), "epoch " << epoch << ", workers " << workers);
    }
    BOOST_TEST(shared->resets == 4);
  }
  auto mapped = ld::make_data_loader(
      Countdown(3)
          .map(transforms::BatchLambda<int, std::string>([](int x) { return std::to_string(x); }))
          .map(transforms::BatchLambda<std::string, kiln::Tensor>([](const std::string& s) {
            return kiln::tensor(int64_t{std::stoi(s)});
          })),
      ld::DataLoaderOptions{});
  int64_t sum = 0;
  for (const kiln::Tensor& t : *mapped) sum += t.item<int64_t>();
  BOOST_TEST(sum == 0 + 1 + 2);
}

BOOST_AUTO_TEST_SUITE_END()
