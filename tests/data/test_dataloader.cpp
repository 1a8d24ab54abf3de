// The DataLoader on map-style and plain iterable datasets: batching, worker counts, order,
// backpressure, WorkerInfo and seeds, errors from workers, clean shutdown, argument checks.
#include "data_test.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

using namespace kiln::data;

namespace {

// Sample i is {"i": i}; optionally slow for some indices, or throwing at one.
std::shared_ptr<Dataset> numbers(int64_t n, int64_t throw_at = -1,
                                 std::function<void(int64_t)> hook = {}) {
  return std::make_shared<LambdaDataset>(n, [=](int64_t i) {
    if (hook) hook(i);
    if (i == throw_at) throw kiln::ValueError("bad sample " + std::to_string(i));
    return Sample(Sample::Map{{"i", i}});
  });
}

std::vector<int64_t> epoch(DataLoader& loader) {
  std::vector<int64_t> out;
  for (Sample& b : loader) {
    for (int64_t v : data_test::ints(b.at("i").tensor())) out.push_back(v);
  }
  return out;
}

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// An iterable dataset that yields worker w's share of 0..n-1 (i % workers == w), or everything
// from every worker when `split` is false ("Effective PyTorch"'s duplicate-samples bug).
class Counter : public IterableDataset {
 public:
  Counter(int64_t n, bool split) : n_(n), split_(split) {}
  std::unique_ptr<SampleStream> iter(const WorkerInfo& w) override {
    struct Stream : SampleStream {
      int64_t next_, step_, n_;
      Stream(int64_t first, int64_t step, int64_t n) : next_(first), step_(step), n_(n) {}
      std::optional<Sample> next() override {
        if (next_ >= n_) return std::nullopt;
        int64_t v = next_;
        next_ += step_;
        return Sample(Sample::Map{{"i", v}});
      }
    };
    if (!split_) return std::make_unique<Stream>(0, 1, n_);
    return std::make_unique<Stream>(w.id, w.num_workers, n_);
  }

 private:
  int64_t n_;
  bool split_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(dataloader)

BOOST_AUTO_TEST_CASE(map_style_batches_in_order_with_any_worker_count) {
  for (int workers : {0, 1, 2, 8}) {
    DataLoader loader(numbers(103), DataLoaderOptions().batch_size(10).workers(workers));
    BOOST_TEST(loader.size() == 11);
    std::vector<int64_t> got;
    int batches = 0;
    for (Sample& b : loader) {
      ++batches;
      BOOST_TEST(b.at("i").tensor().size(0) == (batches == 11 ? 3 : 10));
      for (int64_t v : data_test::ints(b.at("i").tensor())) got.push_back(v);
    }
    BOOST_TEST(batches == 11);
    BOOST_TEST(got == range(103), "workers=" << workers);
  }
}

BOOST_AUTO_TEST_CASE(drop_last_no_batching_and_batch_sampler) {
  DataLoader drop(numbers(25), DataLoaderOptions().batch_size(10).drop_last(true).workers(2));
  BOOST_TEST(drop.size() == 2);
  BOOST_TEST(epoch(drop) == range(20));
  DataLoader none(numbers(3), DataLoaderOptions().batch_size(std::nullopt).workers(1));
  std::vector<int64_t> got;
  for (Sample& s : none) got.push_back(s.at("i").to_int());  // not collated
  BOOST_TEST(got == range(3));
  auto bs = std::make_shared<BatchSampler>(std::make_shared<SequentialSampler>(7), 3, false);
  DataLoader with(numbers(7), DataLoaderOptions().batch_sampler(bs));
  BOOST_TEST(epoch(with) == range(7));
}

BOOST_AUTO_TEST_CASE(shuffle_is_seeded_and_new_each_epoch) {
  auto opts = DataLoaderOptions().batch_size(8).shuffle(true).workers(2);
  kiln::manual_seed(5);
  DataLoader a(numbers(64), opts);
  std::vector<int64_t> e0 = epoch(a), e1 = epoch(a);
  kiln::manual_seed(5);
  DataLoader b(numbers(64), opts);
  BOOST_TEST(epoch(b) == e0);  // reproducible from manual_seed
  BOOST_TEST(e0 != e1);        // a new order each epoch
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST(sorted == range(64));
  // an explicit seed ignores the default generator
  DataLoader c(numbers(64), DataLoaderOptions(8).shuffle(true).seed(9));
  kiln::manual_seed(1);
  DataLoader d(numbers(64), DataLoaderOptions(8).shuffle(true).seed(9).workers(3));
  BOOST_TEST(epoch(c) == epoch(d));
}

BOOST_AUTO_TEST_CASE(unordered_delivery_gets_every_batch) {
  // worker 0's first batch is slow: unordered delivery does not wait for it
  auto ds = numbers(40, -1, [](int64_t i) {
    if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  DataLoader loader(ds, DataLoaderOptions(4).workers(2).enforce_ordering(false));
  std::vector<int64_t> got = epoch(loader);
  BOOST_TEST(got.front() != 0);
  std::sort(got.begin(), got.end());
  BOOST_TEST(got == range(40));
}

BOOST_AUTO_TEST_CASE(prefetch_bounds_the_work_ahead) {
  std::atomic<int64_t> loaded{0};
  auto ds = numbers(1000, -1, [&](int64_t) { loaded.fetch_add(1); });
  DataLoader loader(ds, DataLoaderOptions(1).workers(2).prefetch_factor(3));
  auto it = loader.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // the first batch was delivered; at most workers x prefetch_factor more are loaded
  BOOST_TEST(loaded.load() <= 1 + 2 * 3);
  BOOST_TEST((*it).at("i").tensor()[0].item<int64_t>() == 0);
}

BOOST_AUTO_TEST_CASE(worker_info_and_seeds_as_pytorch) {
  // (Boost.Test's checks are not thread-safe: the workers only record.)
  std::mutex m;
  std::set<std::pair<int64_t, uint64_t>> seen;  // (id, seed - base_seed)
  std::set<int64_t> counts, inits;
  bool missing = false;
  auto ds = numbers(64, -1, [&](int64_t) {
    std::optional<WorkerInfo> w = get_worker_info();
    std::lock_guard<std::mutex> lock(m);
    if (!w) {
      missing = true;
      return;
    }
    seen.insert({w->id, w->seed - w->base_seed});
    counts.insert(w->num_workers);
  });
  DataLoader loader(ds, DataLoaderOptions(2).workers(4).worker_init_fn([&](const WorkerInfo& w) {
    std::lock_guard<std::mutex> lock(m);
    inits.insert(w.id);
  }));
  epoch(loader);
  BOOST_TEST(!missing);
  BOOST_TEST(counts == (std::set<int64_t>{4}));
  BOOST_TEST(inits.size() == 4u);
  for (const auto& [id, offset] : seen) BOOST_TEST(static_cast<uint64_t>(id) == offset);
  BOOST_TEST(!get_worker_info().has_value());  // not in a worker
  // inline: no worker info, as PyTorch's main process
  bool inline_none = true;
  DataLoader inl(numbers(3, -1, [&](int64_t) { inline_none &= !get_worker_info(); }),
                 DataLoaderOptions(1));
  epoch(inl);
  BOOST_TEST(inline_none);
}

BOOST_AUTO_TEST_CASE(worker_error_names_worker_batch_and_sample_and_keeps_its_type) {
  for (int workers : {0, 2}) {
    DataLoader loader(numbers(50, 13), DataLoaderOptions(4).workers(workers));
    std::vector<int64_t> got;
    try {
      for (Sample& b : loader) {
        for (int64_t v : data_test::ints(b.at("i").tensor())) got.push_back(v);
      }
      BOOST_ERROR("no error");
    } catch (const kiln::ValueError& e) {
      std::string what = e.what();
      BOOST_TEST(data_test::contains(what, "batch 3 (indices [12, 13, 14, 15])"), what);
      BOOST_TEST(data_test::contains(what, "sample index 13: bad sample 13"), what);
      if (workers > 0) {
        BOOST_TEST(data_test::contains(what, "DataLoader worker 1 (of 2)"), what);
      }
    }
    BOOST_TEST(got == range(12));                                   // the batches before, in order
    CHECK_ERROR(kiln::ValueError, epoch(loader), "bad sample 13");  // a new epoch: again
  }
}

// Threads of this process (the kernel's count, /proc/self/task).
size_t thread_count() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Polls `done` every 5 ms for at most 10 s.
template <class F>
bool wait_until(F done) {
  auto start = std::chrono::steady_clock::now();
  while (!done()) {
    if (seconds_since(start) > 10.0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Abandoned workers end once their call returns: back to `baseline` within 10 s.
bool no_abandoned_worker_left(int64_t baseline) {
  return wait_until([&] { return abandoned_workers() <= baseline; });
}

// Holds the workers that pass() until open(), or 30 s at most, so that a failing test cannot hang
// the process. Owned by the dataset's function through a shared_ptr: an abandoned worker
// outlives the test's stack.
class Gate {
 public:
  void pass() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return open_; });
    --waiting_;
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int waiting() {
    std::lock_guard<std::mutex> lock(mutex_);
    return waiting_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

BOOST_AUTO_TEST_CASE(early_exit_and_destruction_stop_the_workers) {
  std::atomic<int64_t> loaded{0};
  auto ds = numbers(100000, -1, [&](int64_t) { loaded.fetch_add(1); });
  {
    DataLoader warm(numbers(64), DataLoaderOptions(8).workers(4));  // the CPU plugin's pool
    epoch(warm);
  }
  size_t threads_before = thread_count();
  {
    DataLoader loader(ds, DataLoaderOptions(10).workers(4));
    int n = 0;
    for (Sample& b : loader) {
      (void)b;
      if (++n == 3) break;  // the iterator goes: the epoch's workers stop and join
    }
    int64_t after_break = loaded.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    BOOST_TEST(loaded.load() == after_break);  // nothing loads after the loop left
    auto it = loader.begin();                  // a new epoch, left running...
    BOOST_TEST((*it).at("i").tensor()[0].item<int64_t>() == 0);
  }  // ... and the loader's destruction stops it
  int64_t after_destruction = loaded.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_TEST(loaded.load() == after_destruction);
  // A joined thread can stay listed in /proc/self/task for a moment after pthread_join returns
  // (the kernel wakes the joiner before it releases the task), so the count is polled, bounded.
  auto back_to_before = [&] { return thread_count() == threads_before; };
  BOOST_TEST(wait_until(back_to_before));  // no worker thread left behind
  {
    DataLoader failing(numbers(100, 5), DataLoaderOptions(2).workers(3));
    CHECK_ERROR(kiln::ValueError, epoch(failing), "bad sample 5");
    BOOST_TEST(wait_until(back_to_before));  // joined at the error
  }
}

BOOST_AUTO_TEST_CASE(an_iterator_outliving_its_loader_ends) {
  auto loader = std::make_unique<DataLoader>(numbers(1000), DataLoaderOptions(10).workers(2));
  DataLoader::Iterator it = loader->begin();
  loader.reset();  // workers joined
  BOOST_CHECK_NO_THROW(++it);
  BOOST_TEST((it == DataLoader::Iterator()));
}

BOOST_AUTO_TEST_CASE(persistent_workers_serve_several_epochs) {
  std::mutex m;
  std::set<std::thread::id> threads;
  int inits = 0;
  auto ds = numbers(30, -1, [&](int64_t) {
    std::lock_guard<std::mutex> lock(m);
    threads.insert(std::this_thread::get_id());
  });
  DataLoader loader(ds, DataLoaderOptions(5).workers(2).persistent_workers(true).worker_init_fn(
                            [&](const WorkerInfo&) {
                              std::lock_guard<std::mutex> lock(m);
                              ++inits;
                            }));
  for (int e = 0; e < 3; ++e) BOOST_TEST(epoch(loader) == range(30));
  int n = 0;
  for (Sample& b : loader) {  // leave one early, then a full one
    (void)b;
    if (++n == 2) break;
  }
  BOOST_TEST(epoch(loader) == range(30));
  BOOST_TEST(threads.size() == 2u);
  BOOST_TEST(inits == 2);
}

BOOST_AUTO_TEST_CASE(iterable_datasets_split_or_duplicate) {
  for (int workers : {0, 1, 2, 8}) {
    DataLoader split(std::make_shared<Counter>(50, true), DataLoaderOptions(4).workers(workers));
    std::vector<int64_t> got = epoch(split);
    std::sort(got.begin(), got.end());
    BOOST_TEST(got == range(50), "workers=" << workers);
  }
  // ordered delivery takes the workers in turn: 0's first batch, 1's first, 0's second, ...
  DataLoader turns(std::make_shared<Counter>(8, true), DataLoaderOptions(2).workers(2));
  BOOST_TEST(epoch(turns) == (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  // without splitting, every worker yields everything
  DataLoader dup(std::make_shared<Counter>(10, false), DataLoaderOptions(5).workers(3));
  std::vector<int64_t> got = epoch(dup);
  BOOST_TEST(got.size() == 30u);
}

BOOST_AUTO_TEST_CASE(worker_init_fn_error_reaches_the_caller) {
  DataLoader loader(numbers(10),
                    DataLoaderOptions(2).workers(2).worker_init_fn([](const WorkerInfo& w) {
                      if (w.id == 1) throw kiln::Error("no GPU here");
                    }));
  CHECK_ERROR(kiln::Error, epoch(loader), "DataLoader worker 1 (of 2)",
              "worker_init_fn: no GPU here");
}

BOOST_AUTO_TEST_CASE(timeout_raises_instead_of_hanging) {
  int64_t baseline = abandoned_workers();
  auto slow =
      numbers(4, -1, [](int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
  DataLoader loader(slow, DataLoaderOptions(1).workers(1).timeout(std::chrono::milliseconds(20)));
  CHECK_ERROR(kiln::Error, loader.begin(), "DataLoader timed out after 20 ms");
  BOOST_TEST(no_abandoned_worker_left(baseline));  // the sleeping worker ends on its own
}

BOOST_AUTO_TEST_CASE(timeout_fires_and_the_loader_returns_with_a_stuck_worker) {
  // Index 0 blocks until the end of the test: its worker is stuck. The timeout used to join it
  // first, so begin() hung as long as the worker did (30 s here).
  int64_t baseline = abandoned_workers();
  auto gate = std::make_shared<Gate>();
  auto ds = numbers(8, -1, [gate](int64_t i) {
    if (i == 0) gate->pass();
  });
  auto start = std::chrono::steady_clock::now();
  {
    DataLoader loader(ds, DataLoaderOptions(1).workers(2).timeout(std::chrono::milliseconds(100)));
    CHECK_ERROR(kiln::Error, loader.begin(), "DataLoader timed out after 100 ms",
                "batch 0 from worker 0", "stuck worker thread(s) abandoned");
    // (at least the stuck one: on a loaded machine the idle one may be slow to wake too)
    BOOST_TEST(abandoned_workers() >= baseline + 1);
  }
  BOOST_TEST(seconds_since(start) < 2.0);
  gate->open();
  BOOST_TEST(no_abandoned_worker_left(baseline));
}

BOOST_AUTO_TEST_CASE(destruction_returns_with_a_stuck_worker) {
  int64_t baseline = abandoned_workers();
  for (bool persistent : {false, true}) {
    auto gate = std::make_shared<Gate>();
    auto ds = numbers(100, -1, [gate](int64_t i) {
      if (i == 1) gate->pass();  // batch 1, worker 1's first: requested by begin()
    });
    std::chrono::steady_clock::time_point start;
    {
      DataLoader loader(ds, DataLoaderOptions(1)
                                .workers(2)
                                .persistent_workers(persistent)
                                .timeout(std::chrono::milliseconds(500)));
      DataLoader::Iterator it = loader.begin();
      BOOST_TEST(wait_until([&] { return gate->waiting() == 1; }));
      start = std::chrono::steady_clock::now();
    }  // the iterator, then the loader: neither waits for the stuck worker past the timeout
    BOOST_TEST(seconds_since(start) < 2.0, "persistent=" << persistent);
    BOOST_TEST(abandoned_workers() >= baseline + 1);
    gate->open();
    BOOST_TEST(no_abandoned_worker_left(baseline));
  }
}

BOOST_AUTO_TEST_CASE(a_timeout_replaces_stuck_persistent_workers) {
  int64_t baseline = abandoned_workers();
  auto gate = std::make_shared<Gate>();
  auto stuck_once = std::make_shared<std::atomic<bool>>(true);
  auto ds = numbers(8, -1, [gate, stuck_once](int64_t i) {
    if (i == 3 && stuck_once->exchange(false)) gate->pass();
  });
  DataLoader loader(ds, DataLoaderOptions(2).workers(2).persistent_workers(true).timeout(
                            std::chrono::milliseconds(500)));
  CHECK_ERROR(kiln::Error, epoch(loader), "DataLoader timed out after 500 ms");
  BOOST_TEST(epoch(loader) == range(8));  // new threads, while the stuck one still waits
  BOOST_TEST(abandoned_workers() >= baseline + 1);
  gate->open();
  BOOST_TEST(no_abandoned_worker_left(baseline));
}

BOOST_AUTO_TEST_CASE(leaving_early_waits_for_one_sample_per_worker_not_a_batch) {
  // Batches of 32 samples of 5 ms each: leaving the loop used to finish every batch in flight
  // (up to 31 more samples per worker); now each worker stops after the sample it is in.
  std::atomic<int64_t> started{0};
  auto ds = numbers(10000, -1, [&started](int64_t) {
    started.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  for (bool persistent : {false, true}) {
    DataLoader loader(ds, DataLoaderOptions(32).workers(2).persistent_workers(persistent));
    int64_t at_break = 0;
    auto start = std::chrono::steady_clock::now();
    for (Sample& b : loader) {
      (void)b;
      at_break = started.load();
      start = std::chrono::steady_clock::now();
      break;
    }
    double seconds = seconds_since(start);  // (the loop's end joins non-persistent workers)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t more = started.load() - at_break;
    BOOST_TEST(more <= 2 * 2, "persistent=" << persistent << ": " << more << " more samples");
    BOOST_TEST(seconds < 1.0);
  }
}

BOOST_AUTO_TEST_CASE(argument_errors_as_pytorch) {
  auto iter = std::make_shared<Counter>(4, true);
  auto map = numbers(4);
  CHECK_ERROR(kiln::ValueError, DataLoader(iter, DataLoaderOptions().shuffle(true)),
              "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
              "shuffle=True");
  CHECK_ERROR(kiln::ValueError,
              DataLoader(iter, DataLoaderOptions().sampler(std::make_shared<SequentialSampler>(4))),
              "expected unspecified sampler option");
  CHECK_ERROR(kiln::ValueError, DataLoader(map, DataLoaderOptions().prefetch_factor(2)),
              "prefetch_factor option could only be specified in multiprocessing");
  CHECK_ERROR(kiln::ValueError, DataLoader(map, DataLoaderOptions().persistent_workers(true)),
              "persistent_workers option needs num_workers > 0");
  CHECK_ERROR(kiln::ValueError, DataLoader(map, DataLoaderOptions().workers(-1)),
              "num_workers option should be non-negative");
  CHECK_ERROR(kiln::ValueError,
              DataLoader(map, DataLoaderOptions().shuffle(true).sampler(
                                  std::make_shared<SequentialSampler>(4))),
              "sampler option is mutually exclusive with shuffle");
  auto bs = std::make_shared<BatchSampler>(std::make_shared<SequentialSampler>(4), 2, false);
  CHECK_ERROR(kiln::ValueError, DataLoader(map, DataLoaderOptions(3).batch_sampler(bs)),
              "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
              "and drop_last");
  CHECK_ERROR(kiln::ValueError,
              DataLoader(map, DataLoaderOptions().batch_size(std::nullopt).drop_last(true)),
              "batch_size=None option disables auto-batching and is mutually exclusive with "
              "drop_last");
  CHECK_ERROR(kiln::ValueError, DataLoader(map, DataLoaderOptions(0)),
              "batch_size should be a positive integer value");
  CHECK_ERROR(kiln::TypeError, DataLoader(iter).size(), "IterableDataset has no length");
}

BOOST_AUTO_TEST_CASE(pin_memory_is_a_no_op_on_the_cpu) {
  BOOST_TEST(!pinned_memory_available(kiln::Device(kiln::kCPU)));
  kiln::Tensor t = kiln::ones({4});
  Sample pinned = pin_memory(Sample::Map{{"x", t}}, kiln::Device(kiln::kCPU));
  BOOST_TEST(pinned.at("x").tensor().is_same(t));  // the same tensor, no copy
  DataLoader loader(numbers(8), DataLoaderOptions(4).workers(2).pin_memory(true));
  BOOST_TEST(epoch(loader) == range(8));
}

BOOST_AUTO_TEST_CASE(make_data_loader_as_libtorch) {
  auto ds = std::make_shared<TensorDataset>(std::vector<kiln::Tensor>{kiln::arange(10),
                                                                      kiln::arange(10) * 2});
  auto loader = make_data_loader(ds, DataLoaderOptions(4).workers(2));
  int64_t total = 0;
  for (Sample& b : *loader) {
    BOOST_TEST(b.at(1).tensor().equal(b.at(0).tensor() * 2));
    total += b.at(0).tensor().size(0);
  }
  BOOST_TEST(total == 10);
}

BOOST_AUTO_TEST_SUITE_END()

// pin_memory through a device plugin that offers host_alloc (a stand-in for a GPU plugin).
BOOST_AUTO_TEST_SUITE(pinned_memory)

BOOST_AUTO_TEST_CASE(pin_memory_copies_into_the_plugins_host_memory) {
  std::string file = KILN_DATA_TEST_PLUGIN_DIR "/pinned_device.so";
  kiln::PluginInfo info = kiln::load_plugin(file);
  BOOST_REQUIRE_MESSAGE(info.state == kiln::PluginState::Loaded, info.reason);
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  BOOST_REQUIRE(handle != nullptr);
  auto live = reinterpret_cast<int (*)()>(dlsym(handle, "kiln_test_pinned_live"));
  BOOST_REQUIRE(live != nullptr);
  kiln::Device dev("pintest");
  BOOST_TEST(pinned_memory_available(dev));
  {
    kiln::Tensor t = kiln::arange(6, kiln::kFloat).reshape({2, 3});
    Sample pinned = pin_memory(Sample::Map{{"x", t}, {"n", 3}}, dev);
    const kiln::Tensor& p = pinned.at("x").tensor();
    BOOST_TEST(p.data_ptr() != t.data_ptr());
    BOOST_TEST(p.is_cpu());
    BOOST_TEST(p.equal(t));
    BOOST_TEST(pinned.at("n").to_int() == 3);
    BOOST_TEST(live() == 1);
    DataLoader loader(numbers(8),
                      DataLoaderOptions(4).workers(2).pin_memory(true).pin_memory_device(dev));
    BOOST_TEST(epoch(loader) == range(8));
  }
  BOOST_TEST(live() == 0);  // freed through the plugin
  dlclose(handle);
}

BOOST_AUTO_TEST_SUITE_END()
