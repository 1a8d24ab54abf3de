// Memory reuse: the block cache for large storages (Note [Block cache]) and the per-thread pool
// for the small objects of every tensor (Note [Small object pool]).
#include "tensor_test.h"

#include <thread>
#include <vector>

using namespace kiln;

BOOST_AUTO_TEST_SUITE(memory)

BOOST_AUTO_TEST_CASE(a_dead_large_block_is_reused_by_the_next_allocation_of_its_size_class) {
  Device cpu("cpu");
  empty_cache(cpu);
  BOOST_TEST(cached_bytes(cpu) == 0u);
  const void* first = nullptr;
  {
    Tensor big = zeros({1 << 20});  // 4 MiB
    first = big.data_ptr<float>();
  }
  BOOST_TEST(cached_bytes(cpu) == size_t{4} << 20);
  // 4 MiB + 4 bytes rounds up to the class 4.5 MiB: not the cached block
  Tensor other = empty({(1 << 20) + 1});
  BOOST_TEST(other.data_ptr<float>() != first);
  BOOST_TEST(cached_bytes(cpu) == size_t{4} << 20);
  Tensor again = full({1024, 1024}, 2.5);
  BOOST_TEST(again.data_ptr<float>() == first);
  BOOST_TEST(cached_bytes(cpu) == 0u);
  BOOST_TEST(again.sum().item<double>() == 2.5 * 1024 * 1024);  // a reused block is rewritten
}

BOOST_AUTO_TEST_CASE(sizes_in_one_class_share_blocks_and_small_ones_are_not_cached) {
  Device cpu("cpu");
  empty_cache(cpu);
  const void* first = nullptr;
  {
    Tensor a = empty({(1 << 20) + 1});  // 4 MiB + 4 bytes: class 4.5 MiB
    first = a.data_ptr<float>();
  }
  BOOST_TEST(cached_bytes(cpu) == (size_t{9} << 20) / 2);
  Tensor b = empty({(1 << 20) + 100000});  // 4.38 MiB, the same class
  BOOST_TEST(b.data_ptr<float>() == first);
  { Tensor small = ones({1000}); }
  BOOST_TEST(cached_bytes(cpu) == 0u);
}

BOOST_AUTO_TEST_CASE(empty_cache_gives_every_block_back) {
  Device cpu("cpu");
  empty_cache(cpu);
  { std::vector<Tensor> ts = {zeros({1 << 19}), zeros({1 << 20}), zeros({3 << 19})}; }
  size_t cached = cached_bytes(cpu);
  BOOST_TEST(cached == (size_t{2} << 20) + (size_t{4} << 20) + (size_t{6} << 20));
  BOOST_TEST(empty_cache(cpu) == cached);
  BOOST_TEST(cached_bytes(cpu) == 0u);
}

BOOST_AUTO_TEST_CASE(tensors_made_on_one_thread_die_on_another) {
  // the pool takes blocks freed by any thread; values survive the hand-over
  std::vector<Tensor> made(2000);
  std::thread producer([&] {
    for (size_t i = 0; i < made.size(); ++i) made[i] = full({3}, static_cast<double>(i));
  });
  producer.join();
  double total = 0;
  for (const Tensor& t : made) total += t.sum().item<double>();
  BOOST_TEST(total == 3.0 * 1999 * 2000 / 2);
  made.clear();
  std::thread consumer([] {
    for (int i = 0; i < 2000; ++i) {
      Tensor t = ones({2}) + ones({2});
      BOOST_REQUIRE(t.sum().item<double>() == 4.0);
    }
  });
  consumer.join();
}

// A device that has no memory left is PyTorch's OutOfMemoryError (a kiln::Error), naming the
// device and the bytes asked for; the process goes on and smaller allocations still work.
BOOST_AUTO_TEST_CASE(an_allocation_the_device_cannot_hold_is_an_out_of_memory_error) {
  int64_t petabyte = int64_t(1) << 50;  // within the size checks, beyond any machine's memory
  CHECK_ERROR(OutOfMemoryError, empty({petabyte}, kUInt8), "out of memory on cpu",
              "allocating 1125899906842624 bytes");
  BOOST_CHECK_EQUAL(ones({4}).sum().item<float>(), 4.0f);
}

BOOST_AUTO_TEST_SUITE_END()
