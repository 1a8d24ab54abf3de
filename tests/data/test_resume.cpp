// state_dict / load_state_dict: resuming after k batches yields exactly the rest of the epoch.
#include "data_test.h"

#include <algorithm>
#include <limits>
#include <set>

using namespace kiln::data;
using data_test::numbers;
using data_test::TempDir;

namespace {

std::vector<int64_t> values(const Sample& b) { return data_test::ints(b.at("i").tensor()); }

// Batches [first, ...) of one epoch of `loader`, flattened; stops after `count` batches (-1: all).
std::vector<int64_t> take(DataLoader& loader, int count = -1) {
  std::vector<int64_t> out;
  int n = 0;
  for (Sample& b : loader) {
    for (int64_t v : values(b)) out.push_back(v);
    if (++n == count) break;
  }
  return out;
}

std::vector<std::string> take_keys(DataLoader& loader, int count = -1) {
  std::vector<std::string> out;
  int n = 0;
  for (Sample& b : loader) {
    data_test::collect_keys(b, out);
    if (++n == count) break;
  }
  return out;
}

// A state written to text and read back, as a checkpoint would.
Sample through_text(const Sample& state) { return parse_state(dump_state(state)); }

}  // namespace

BOOST_AUTO_TEST_SUITE(resume)

BOOST_AUTO_TEST_CASE(map_style_resumes_with_any_worker_count) {
  auto opts = [](int workers) {
    return DataLoaderOptions(4).shuffle(true).seed(7).workers(workers);
  };
  DataLoader full(numbers(50), opts(2));
  std::vector<int64_t> e0 = take(full), e1 = take(full);
  for (int workers : {0, 2, 3}) {
    DataLoader first(numbers(50), opts(2));
    std::vector<int64_t> head = take(first, 5);
    BOOST_TEST(head.size() == 20u);
    Sample state = through_text(first.state_dict());
    BOOST_TEST(state.at("batches").to_int() == 5);
    DataLoader second(numbers(50), opts(workers));
    second.load_state_dict(state);
    std::vector<int64_t> rest = take(second);
    BOOST_TEST(rest == std::vector<int64_t>(e0.begin() + 20, e0.end()), "workers=" << workers);
    BOOST_TEST(take(second) == e1);  // and the next epoch is the uninterrupted run's
  }
}

BOOST_AUTO_TEST_CASE(distributed_resumes_on_other_ranks_with_the_same_global_batch) {
  // 2 ranks x batch 4 for 3 steps, then 4 ranks x batch 2: together they read the rest.
  const int64_t n = 64;
  std::vector<int64_t> consumed;
  std::vector<Sample> states;
  for (int rank = 0; rank < 2; ++rank) {
    auto sampler = std::make_shared<DistributedSampler>(n, 2, rank, true, 5);
    DataLoader loader(numbers(n), DataLoaderOptions(4).sampler(sampler).seed(1));
    std::vector<int64_t> head = take(loader, 3);
    consumed.insert(consumed.end(), head.begin(), head.end());
    states.push_back(loader.state_dict());
  }
  std::vector<int64_t> rest;
  for (int rank = 0; rank < 4; ++rank) {
    auto sampler = std::make_shared<DistributedSampler>(n, 4, rank, true, 5);
    DataLoader loader(numbers(n), DataLoaderOptions(2).sampler(sampler).seed(1));
    loader.load_state_dict(states[0]);  // every rank's state says the same position
    std::vector<int64_t> r = take(loader);
    rest.insert(rest.end(), r.begin(), r.end());
  }
  std::vector<int64_t> all = consumed;
  all.insert(all.end(), rest.begin(), rest.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(n);
  for (int64_t i = 0; i < n; ++i) expected[static_cast<size_t>(i)] = i;
  BOOST_TEST(all == expected);  // every sample once across the change of ranks
  // a global batch that does not divide: refused
  auto odd = std::make_shared<DistributedSampler>(n, 5, 0, true, 5);  // 24 samples / 5
  DataLoader bad(numbers(n), DataLoaderOptions(2).sampler(odd));
  CHECK_ERROR(kiln::ValueError, bad.load_state_dict(states[0]), "cannot split",
              "same global batch");
}

BOOST_AUTO_TEST_CASE(tar_source_resumes_exactly_with_the_same_workers) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 5, 13);
  auto source = [&] { return open(url, SourceOptions().shuffle_shards(true).shuffle(20, 5)); };
  auto opts = DataLoaderOptions(4).workers(3).seed(21);
  DataLoader full(source(), opts);
  std::vector<std::string> all = take_keys(full);
  BOOST_TEST(all.size() == 65u);
  for (int k : {1, 4, 9}) {
    DataLoader first(source(), opts);
    std::vector<std::string> head = take_keys(first, k);
    Sample state = through_text(first.state_dict());
    DataLoader second(source(), opts);
    second.load_state_dict(state);
    std::vector<std::string> rest = take_keys(second);
    head.insert(head.end(), rest.begin(), rest.end());
    BOOST_TEST(head == all, "k=" << k);  // the same order as the uninterrupted epoch
  }
}

BOOST_AUTO_TEST_CASE(tar_source_resumes_with_another_worker_count) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 6, 10);
  auto source = [&] { return open(url, SourceOptions().shuffle(16, 4)); };
  for (auto [before, after] : {std::pair{3, 2}, std::pair{2, 5}, std::pair{0, 3}}) {
    DataLoader first(source(), DataLoaderOptions(4).workers(before).seed(2));
    std::vector<std::string> head = take_keys(first, 5);
    Sample state = through_text(first.state_dict());
    DataLoader second(source(), DataLoaderOptions(4).workers(after).seed(2));
    second.load_state_dict(state);
    std::vector<std::string> rest = take_keys(second);
    std::vector<std::string> both = head;
    both.insert(both.end(), rest.begin(), rest.end());
    BOOST_TEST(both.size() == 60u, before << " -> " << after << " workers");
    BOOST_TEST(data_test::count(both).size() == 60u);  // each sample exactly once
    // and resuming the resumed run again, with yet another count
    DataLoader third(source(), DataLoaderOptions(4).workers(after).seed(2));
    third.load_state_dict(state);
    std::vector<std::string> part = take_keys(third, 2);
    DataLoader fourth(source(), DataLoaderOptions(4).workers(1).seed(2));
    fourth.load_state_dict(through_text(third.state_dict()));
    std::vector<std::string> tail = take_keys(fourth);
    std::vector<std::string> again = head;
    again.insert(again.end(), part.begin(), part.end());
    again.insert(again.end(), tail.begin(), tail.end());
    BOOST_TEST(data_test::count(again).size() == 60u);
    BOOST_TEST(again.size() == 60u);
  }
}

BOOST_AUTO_TEST_CASE(tar_source_resumes_on_another_number_of_ranks) {
  // 2 ranks x 2 workers read 3 batches each; their merged state resumes on 3 ranks x 1 worker.
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 6, 10);
  auto source = [&](int rank, int world) {
    return open(url, SourceOptions().rank(rank).world_size(world).shuffle(8, 2).seed(4));
  };
  std::vector<std::string> seen;
  std::vector<Sample> states;
  for (int rank = 0; rank < 2; ++rank) {
    DataLoader loader(source(rank, 2), DataLoaderOptions(4).workers(2).seed(1));
    std::vector<std::string> head = take_keys(loader, 3);
    seen.insert(seen.end(), head.begin(), head.end());
    states.push_back(through_text(loader.state_dict()));
  }
  Sample merged = through_text(merge_states(states));
  for (int rank = 0; rank < 3; ++rank) {
    DataLoader loader(source(rank, 3), DataLoaderOptions(4).workers(1).seed(1));
    loader.load_state_dict(merged);
    std::vector<std::string> rest = take_keys(loader);
    seen.insert(seen.end(), rest.begin(), rest.end());
  }
  BOOST_TEST(seen.size() == 60u);
  BOOST_TEST(data_test::count(seen).size() == 60u);  // each sample exactly once
}

BOOST_AUTO_TEST_CASE(plain_iterable_needs_the_same_worker_count) {
  auto ds = std::make_shared<data_test::Strided40>();
  DataLoader full(ds, DataLoaderOptions(3).workers(2));
  std::vector<int64_t> all = take(full);
  DataLoader first(ds, DataLoaderOptions(3).workers(2));
  std::vector<int64_t> head = take(first, 4);
  Sample state = first.state_dict();
  DataLoader second(ds, DataLoaderOptions(3).workers(2));
  second.load_state_dict(state);
  std::vector<int64_t> rest = take(second);
  head.insert(head.end(), rest.begin(), rest.end());
  BOOST_TEST(head == all);
  DataLoader other(ds, DataLoaderOptions(3).workers(3));
  CHECK_ERROR(kiln::ValueError, other.load_state_dict(state), "saved with 2 readers",
              "this loader has 3", "same number of workers");
}

BOOST_AUTO_TEST_CASE(a_finished_epoch_resumes_at_the_next) {
  DataLoader a(numbers(10), DataLoaderOptions(3).shuffle(true).seed(4));
  take(a);
  Sample state = a.state_dict();
  BOOST_TEST(state.at("epoch").to_int() == 1);
  BOOST_TEST(!state.at("in_epoch").to_bool());
  std::vector<int64_t> e1 = take(a);
  DataLoader b(numbers(10), DataLoaderOptions(3).shuffle(true).seed(4));
  b.load_state_dict(state);
  BOOST_TEST(take(b) == e1);
}

// `state` with `key` set to `value`.
Sample with(Sample state, const std::string& key, Sample value) {
  state[key] = std::move(value);
  return state;
}

BOOST_AUTO_TEST_CASE(every_field_of_a_loaded_state_is_checked) {
  auto ds = std::make_shared<data_test::Strided40>();
  DataLoader first(ds, DataLoaderOptions(3).workers(2));
  take(first, 3);
  Sample state = through_text(first.state_dict());
  auto load = [&](const Sample& s) {
    DataLoader loader(ds, DataLoaderOptions(3).workers(2));
    loader.load_state_dict(s);
  };
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  // -2 indexed before the per-worker arrays (ASan: heap-buffer-overflow in EpochRun::dispatch)
  CHECK_ERROR(kiln::ValueError, load(with(state, "last_worker", -2)),
              "DataLoader.load_state_dict: 'last_worker' is -2, expected -1 .. 1");
  CHECK_ERROR(kiln::ValueError, load(with(state, "last_worker", 2)), "'last_worker' is 2");
  CHECK_ERROR(kiln::ValueError, load(with(state, "last_worker", "0")),
              "'last_worker' must be an int");
  CHECK_ERROR(kiln::ValueError, load(with(state, "worker_samples", Sample::List{1, 2, 3})),
              "'worker_samples' must be a list of 2 ints");
  CHECK_ERROR(kiln::ValueError, load(with(state, "worker_samples", Sample::List{1, -1})),
              "'worker_samples' is -1");
  CHECK_ERROR(kiln::ValueError, load(with(state, "worker_batches", Sample::List{1, "x"})),
              "'worker_batches' holds \"x\"");
  CHECK_ERROR(kiln::ValueError, load(with(state, "exhausted", Sample::List{0, 2})),
              "'exhausted' is 2, expected 0 .. 1");
  CHECK_ERROR(kiln::ValueError, load(with(state, "base_seed", -5)), "'base_seed' is -5");
  CHECK_ERROR(kiln::ValueError, load(with(state, "epoch", -1)), "'epoch' is -1");
  CHECK_ERROR(kiln::ValueError, load(with(state, "epoch", max)), "'epoch' is");
  CHECK_ERROR(kiln::ValueError, load(with(state, "batches", max)), "'batches' is");
  CHECK_ERROR(kiln::ValueError, load(with(state, "samples", 2.5)), "'samples' must be an int");
  CHECK_ERROR(kiln::ValueError, load(with(state, "workers", -3)), "'workers' is -3");
  CHECK_ERROR(kiln::ValueError, load(with(state, "replicas", 0)), "'replicas' is 0");
  CHECK_ERROR(kiln::ValueError, load(with(state, "batch_size", 0)), "'batch_size' is 0");
  CHECK_ERROR(kiln::ValueError, load(with(state, "in_epoch", 1)), "'in_epoch' must be a bool");
  CHECK_ERROR(kiln::ValueError, load(with(state, "version", 2)), "'version' is 2");
  CHECK_ERROR(kiln::ValueError, load(Sample::Map{{"version", 1}}), "the state has no 'epoch'");
  CHECK_ERROR(kiln::ValueError, load(Sample(3)), "expects the map that state_dict() returned");
  // delivered ranges: end - begin overflowed int64
  CHECK_ERROR(kiln::ValueError,
              load(with(state, "delivered", Sample::List{Sample::List{0, min, max}})),
              "'delivered' expects [shard, begin, end] triples", "0 <= begin <= end");
  CHECK_ERROR(kiln::ValueError, load(with(state, "delivered", Sample::List{Sample::List{0, 5}})),
              "'delivered' expects");
  CHECK_ERROR(kiln::ValueError, load(with(state, "delivered", "all")), "'delivered' expects");
  CHECK_ERROR(kiln::ValueError,
              load(with(state, "resumed_from", Sample::List{Sample::List{-1, 0, 1}})),
              "'resumed_from' expects");
  // samples x replicas overflowed int64 (map-style)
  DataLoader map_loader(numbers(50), DataLoaderOptions(4));
  take(map_loader, 2);
  Sample map_state = map_loader.state_dict();
  map_state["samples"] = int64_t{1} << 61;
  map_state["replicas"] = 8;
  CHECK_ERROR(kiln::ValueError, DataLoader(numbers(50)).load_state_dict(map_state),
              "'samples' 2305843009213693952 x 'replicas' 8 overflows int64");
  // merge_states reads its states the same way
  CHECK_ERROR(kiln::ValueError, merge_states({state, with(state, "last_worker", 7)}),
              "merge_states: state 1: 'last_worker' is 7");
  // and the state as saved still resumes
  DataLoader second(ds, DataLoaderOptions(3).workers(2));
  second.load_state_dict(state);
  BOOST_TEST(take(second).size() == 40u - 9u);
}

BOOST_AUTO_TEST_CASE(a_state_is_refused_or_resumes_whatever_its_values) {
  // Each field of a saved state set to extreme values: load_state_dict refuses it or the epoch
  // runs; never a crash, a hang or a sanitizer report (run under ASan/UBSan).
  auto ds = std::make_shared<data_test::Strided40>();
  DataLoader first(ds, DataLoaderOptions(3).workers(2));
  take(first, 3);
  Sample state = first.state_dict();
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  std::vector<Sample> values = {-2,
                                -1,
                                0,
                                1,
                                2,
                                3,
                                int64_t{1} << 62,
                                max,
                                min,
                                Sample(),
                                true,
                                "x",
                                Sample::List{},
                                Sample::List{max, max}};
  int loaded = 0, refused = 0;
  for (const auto& [key, unused] : state.map()) {
    (void)unused;
    for (const Sample& v : values) {
      DataLoader loader(ds, DataLoaderOptions(3).workers(2));
      try {
        loader.load_state_dict(with(state, key, v));
      } catch (const kiln::ValueError&) {
        ++refused;
        continue;
      }
      ++loaded;
      BOOST_CHECK_NO_THROW(take(loader));
    }
  }
  BOOST_TEST(refused > 0);
  BOOST_TEST(loaded > 0);
}

BOOST_AUTO_TEST_SUITE_END()
