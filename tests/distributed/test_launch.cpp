// kiln-launch (tools/kiln_launch.cpp): the environment it gives each rank, its output prefixes,
// its exit status, and a failing or killed rank stopping the job within the stop timeout; then a
// real job: dist_worker's collectives over gloo, started by kiln-launch.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr
  double seconds = 0;
};

Result launch(const std::string& args) {
  auto start = std::chrono::steady_clock::now();
  // loopback only, as every distributed test
  std::string command = "GLOO_SOCKET_IFNAME=lo " + std::string(KILN_LAUNCH) + " " + args + " 2>&1";
  Result r;
  FILE* p = ::popen(command.c_str(), "r");
  BOOST_REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int ws = ::pclose(p);
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

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

}  // namespace

BOOST_AUTO_TEST_CASE(launch_sets_the_environment_and_prefixes_output) {
  Result r = launch(
      "--nproc-per-node 2 --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --master-port 1234 -- "
      "sh -c 'echo rank=$RANK local=$LOCAL_RANK world=$WORLD_SIZE at=$MASTER_ADDR:$MASTER_PORT; "
      "echo oops >&2'");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.status == 0);
  BOOST_TEST(has(r.output, "[rank2]: rank=2 local=0 world=4 at=10.0.0.1:1234\n"));
  BOOST_TEST(has(r.output, "[rank3]: rank=3 local=1 world=4 at=10.0.0.1:1234\n"));
  BOOST_TEST(has(r.output, "[rank3]: oops\n"));
}

BOOST_AUTO_TEST_CASE(launch_exits_with_the_failing_rank_status) {
  Result r = launch("--nproc-per-node 3 sh -c 'if [ $RANK = 2 ]; then exit 3; fi; sleep 60'");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.status == 3);
  BOOST_TEST(has(r.output, "rank 2 (pid"));
  BOOST_TEST(has(r.output, "exited with status 3: stopping the other ranks"));
  BOOST_TEST(r.seconds < 10);
}

BOOST_AUTO_TEST_CASE(a_killed_rank_stops_the_job_within_the_timeout) {
  // rank 0 ignores SIGTERM: the stop timeout (1 s) ends it with SIGKILL
  Result r = launch("--nproc-per-node 2 --stop-timeout 1 sh -c "
                    "'if [ $RANK = 1 ]; then sleep 0.2; kill -9 $$; fi; trap \"\" TERM; sleep 60'");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.status == 128 + 9);
  BOOST_TEST(has(r.output, "rank 1 (pid"));
  BOOST_TEST(has(r.output, "was killed by signal 9"));
  BOOST_TEST(r.seconds < 1 + 5);
}

BOOST_AUTO_TEST_CASE(launch_refuses_bad_arguments) {
  Result r = launch("--nproc-per-node 2");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(has(r.output, "no program to run"));
  r = launch("--nproc-per-node two true");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(has(r.output, "--nproc-per-node 'two' is not an integer"));
  r = launch("--nproc-per-node 1 /nonexistent/program");
  BOOST_TEST(r.status == 127);
  BOOST_TEST(has(r.output, "cannot run /nonexistent/program"));
}

BOOST_AUTO_TEST_CASE(launch_runs_a_gloo_job) {
  Result r = launch("--nproc-per-node 2 --master-port " + std::to_string(free_port()) + " " +
                    KILN_DIST_WORKER + " collectives");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.status == 0);
}
