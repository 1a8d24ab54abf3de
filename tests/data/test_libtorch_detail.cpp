// libtorch's loader internals that ported code may use directly: detail::Queue, DataShuttle and
// the sequencers (kiln's loaders use their worker pool instead).
#include "check_error.h"

#include <kiln/data/detail/data_shuttle.h>
#include <kiln/data/detail/sequencers.h>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>

namespace detail = kiln::data::detail;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(libtorch_detail)

BOOST_AUTO_TEST_CASE(queue_is_fifo_across_threads_with_a_timeout) {
  detail::Queue<int> q;
  q.push(4);
  q.push(5);
  BOOST_TEST(q.pop() == 4);
  BOOST_TEST(q.pop(10ms) == 5);
  CHECK_ERROR(kiln::Error, q.pop(15ms),
              "Timeout in DataLoader queue while waiting for next batch (timeout was 15 ms)");
  auto later = std::async(std::launch::async, [&q] { return q.pop(); });  // waits
  std::this_thread::sleep_for(10ms);
  q.push(6);
  BOOST_TEST(later.get() == 6);
  q.push(1);
  q.push(2);
  BOOST_TEST(q.clear() == 2u);
  CHECK_ERROR(kiln::Error, q.pop(1ms), "Timeout");
}

BOOST_AUTO_TEST_CASE(shuttle_counts_jobs_in_flight) {
  detail::DataShuttle<int, std::string> s;
  BOOST_TEST(!s.pop_result().has_value());  // nothing in flight
  s.push_job(1);
  s.push_job(2);
  BOOST_TEST(s.in_flight_jobs() == 2u);
  BOOST_TEST(s.pop_job() == 1);
  s.push_result("one");
  BOOST_TEST(s.pop_result().value() == "one");
  CHECK_ERROR(kiln::Error, s.pop_result(5ms), "Timeout");  // job 2 has no result yet
  s.drain();                                               // drops job 2
  BOOST_TEST(s.in_flight_jobs() == 0u);
  BOOST_TEST(!s.pop_result().has_value());
}

BOOST_AUTO_TEST_CASE(ordered_sequencer_restores_the_order) {
  struct R {
    size_t sequence_number;
  };
  detail::sequencers::NoSequencer<int> none;
  BOOST_TEST(none.next([] { return 8; }).value() == 8);
  detail::sequencers::OrderedSequencer<R> seq(4);
  BOOST_TEST(seq.next_sequence_number_ == 0u);
  BOOST_TEST(seq.buffer_.size() == 4u);
  std::vector<size_t> arrival = {1, 3, 0, 2};
  size_t produced = 0;
  auto producer = [&]() -> std::optional<R> {
    if (produced == arrival.size()) return std::nullopt;
    return R{arrival[produced++]};
  };
  for (size_t want = 0; want < 4; ++want) {
    BOOST_TEST(seq.next(producer)->sequence_number == want);
  }
  BOOST_TEST(produced == 4u);
  BOOST_TEST(!seq.next(producer).has_value());
  detail::sequencers::OrderedSequencer<R> small(2);
  size_t far = 0;
  CHECK_ERROR(kiln::ValueError, small.next([&] { return std::optional<R>(R{5 + far++}); }),
              "sequence number 5 is outside the window [0, 2)");
  CHECK_ERROR(kiln::ValueError, detail::sequencers::OrderedSequencer<R>(0),
              "max_jobs must be positive");
}

BOOST_AUTO_TEST_SUITE_END()
