// kiln::distributed on the gloo backend over loopback (127.0.0.1): every test starts a job of
// dist_worker processes (one per rank, with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as
// kiln-launch sets them) and checks each rank's exit status and messages. dist_worker.cpp says
// what each scenario checks on its rank. Every wait is bounded: the job is killed after a
// deadline, and the fault scenarios run with a 3 s group timeout.
#define BOOST_TEST_MODULE distributed
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Rank {
  int status = -1;  // exit status, or 128 + signal
  std::string err;
};

struct Job {
  std::vector<Rank> ranks;
  double seconds = 0;
};

// A port that was free a moment ago.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Starts `started` ranks of a job of `world_size`, each running dist_worker SCENARIO; kills what
// still runs after `deadline_s`.
Job run_job(const std::string& scenario, int world_size, int started, int timeout_ms,
            double deadline_s, int port = 0, std::map<std::string, std::string> env = {}) {
  if (port == 0) port = free_port();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  auto start = Clock::now();
  for (int r = 0; r < started; ++r) {
    std::string log = "/tmp/kiln-dist-test-" + std::to_string(::getpid()) + "-" +
                      std::to_string(port) + "-" + std::to_string(r) + ".log";
    logs.push_back(log);
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(world_size).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("GLOO_SOCKET_IFNAME", "lo", 1);
      ::setenv("KILN_TEST_TIMEOUT_MS", std::to_string(timeout_ms).c_str(), 1);
      for (auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execl(KILN_DIST_WORKER, KILN_DIST_WORKER, scenario.c_str(), nullptr);
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  Job job;
  job.ranks.resize(started);
  int left = started;
  while (left > 0) {
    bool late = std::chrono::duration<double>(Clock::now() - start).count() > deadline_s;
    for (int r = 0; r < started; ++r) {
      if (pids[r] == 0) continue;
      if (late) ::kill(pids[r], SIGKILL);
      int status = 0;
      pid_t done = ::waitpid(pids[r], &status, late ? 0 : WNOHANG);
      if (done != pids[r]) continue;
      job.ranks[r].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pids[r] = 0;
      --left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  job.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int r = 0; r < started; ++r) {
    std::ifstream in(logs[r]);
    std::stringstream text;
    text << in.rdbuf();
    job.ranks[r].err = text.str();
    ::unlink(logs[r].c_str());
  }
  return job;
}

void expect_ok(const Job& job, const std::vector<int>& ranks) {
  for (int r : ranks) {
    BOOST_TEST_INFO("rank " << r << " stderr:\n" << job.ranks[r].err);
    BOOST_TEST(job.ranks[r].status == 0);
  }
}

std::vector<int> all(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(collectives_world_size_2) {
  Job job = run_job("collectives", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(collectives_world_size_3) {
  Job job = run_job("collectives", 3, 3, 20000, 120);
  expect_ok(job, all(3));
}

BOOST_AUTO_TEST_CASE(bad_arguments_and_a_world_of_one) {
  Job job = run_job("bad_init", 1, 1, 5000, 60);
  expect_ok(job, {0});
}

BOOST_AUTO_TEST_CASE(mismatched_sizes_and_dtypes_are_errors) {
  Job job = run_job("mismatch", 3, 3, 3000, 60);
  expect_ok(job, all(3));
}

BOOST_AUTO_TEST_CASE(a_dead_rank_is_named_within_the_timeout) {
  Job job = run_job("rank_dies", 3, 3, 3000, 30);
  BOOST_TEST(job.ranks[1].status == 7);
  expect_ok(job, {0, 2});
  BOOST_TEST(job.seconds < 3 + 5);  // the timeout and the diagnosis, with start-up
}

BOOST_AUTO_TEST_CASE(the_rank_that_died_is_named_not_a_follower) {
  Job job = run_job("rank_dies_then_a_follower", 4, 4, 2000, 30);
  BOOST_TEST(job.ranks[1].status == 7);
  expect_ok(job, {0, 2, 3});
  BOOST_TEST(job.seconds < 2 * 2 + 8);
}

BOOST_AUTO_TEST_CASE(a_stalled_rank_is_named_within_the_timeout) {
  Job job = run_job("rank_stalls", 2, 2, 3000, 30);
  expect_ok(job, {0});
  BOOST_TEST(job.seconds < 3 * 2 + 5);  // rank 1 sleeps twice the timeout
}

BOOST_AUTO_TEST_CASE(a_rank_that_never_joins) {
  auto start = Clock::now();
  Job job = run_job("never_joins", 3, 2, 2000, 30);
  expect_ok(job, all(2));
  BOOST_TEST(std::chrono::duration<double>(Clock::now() - start).count() < 2 + 5);
}

BOOST_AUTO_TEST_CASE(a_port_in_use) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  BOOST_REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  Job job = run_job("port_in_use", 1, 1, 2000, 30, ntohs(a.sin_port));
  ::close(fd);
  expect_ok(job, {0});
}

// 2 ranks x 2 workers over tar shards: each sample exactly once per epoch across the ranks, and
// exactly once again across a mid-epoch save and resume on every rank.
BOOST_AUTO_TEST_CASE(data_exactly_once_across_ranks_and_workers_with_a_resume) {
  char tmpl[] = "/tmp/kiln-dist-data-XXXXXX";
  BOOST_REQUIRE(::mkdtemp(tmpl) != nullptr);
  std::string work = tmpl;
  Job job = run_job("data", 2, 2, 20000, 120, 0, {{"KILN_TEST_WORK", work}});
  expect_ok(job, all(2));
  for (std::string kind : {"full", "resumed"}) {
    std::map<std::string, int> seen;
    for (int r = 0; r < 2; ++r) {
      std::ifstream in(work + "/keys." + kind + "." + std::to_string(r));
      std::string key;
      int lines = 0;
      while (std::getline(in, key)) {
        seen[key] += 1;
        ++lines;
      }
      BOOST_TEST(lines > 0, kind << ": rank " << r << " read samples");
    }
    BOOST_TEST(seen.size() == 60u, kind);
    for (auto& [key, n] : seen)
      BOOST_TEST(n == 1, kind << ": " << key << " read " << n << " times");
  }
  std::filesystem::remove_all(work);
}

BOOST_AUTO_TEST_CASE(ddp_comm_hooks_compress_as_pytorch_and_a_user_hook_runs_per_bucket) {
  Job job = run_job("ddp_hooks", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(ddp_gradients_as_bucket_views) {
  Job job = run_job("ddp_bucket_view", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(ddp_checkpoint_saved_by_rank_0_loaded_by_every_rank) {
  Job job = run_job("ddp_checkpoint", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(zero_redundancy_optimizer_equals_adam_and_consolidates) {
  Job job = run_job("zero", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(zero_redundancy_optimizer_is_an_optimizer_with_groups_and_a_scheduler) {
  Job job = run_job("zero_groups", 2, 2, 20000, 180);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(ddp_wraps_a_sequential_and_launches_buckets_when_gradients_accumulate) {
  Job job = run_job("ddp_sequential", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(ddp_two_ranks_equal_one_process_with_the_whole_batch) {
  Job job = run_job("ddp", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}

BOOST_AUTO_TEST_CASE(ddp_autocast_and_grad_scaler_skip_on_every_rank) {
  Job job = run_job("ddp_amp", 2, 2, 20000, 120);
  expect_ok(job, all(2));
}
