// Note [Stale temporaries] (core/src/serialize/file_io.cpp): a save removes the temporaries that
// killed saves to the same path left behind, and never one that a live save may still finish.
#include "serialize_test.h"

#include <algorithm>
#include <ctime>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln;
using namespace serialize_test;

namespace {

// A pid that no process has (a child that has exited and been reaped).
pid_t dead_pid() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  BOOST_REQUIRE(child > 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// The host part kiln puts in temporary names (see host_tag in file_io.cpp).
std::string host_tag() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string t(name, ::strnlen(name, 32));
  for (char& c : t) c = c == '-' || c == '/' ? '_' : c;
  return t;
}

// Writes a file last modified `age` seconds ago.
void write_aged(const std::string& path, time_t age) {
  write_bytes(path, std::string(1000, 'x'));
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ::time(nullptr) - age;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  BOOST_REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

bool exists(const ScratchDir& scratch, const std::string& name) {
  std::vector<std::string> files = scratch.files();
  return std::find(files.begin(), files.end(), name) != files.end();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stale_temporaries)

BOOST_AUTO_TEST_CASE(a_save_removes_what_killed_saves_left_and_nothing_else) {
  ScratchDir scratch;
  const std::string host = host_tag();
  const std::string dead = std::to_string(dead_pid());
  const std::string self = std::to_string(::getpid());
  const time_t minutes = 5 * 60, days = 2 * 24 * 60 * 60;
  const std::vector<std::string> stale = {
      "m.safetensors.tmp-" + host + "-" + dead + "-0",   // its process is gone
      "m.safetensors.tmp-" + dead + "-7",                // older kiln's name
      "m.safetensors.tmp-" + host + "-" + self + "-99",  // this pid, but no save of ours
      "m.safetensors.tmp-otherhost-1-0",                 // another host, abandoned for days
  };
  for (size_t i = 0; i < stale.size(); ++i) {
    write_aged(scratch.path(stale[i]), i + 1 == stale.size() ? days : minutes);
  }
  const std::vector<std::string> kept = {
      "m.safetensors.tmp-" + host + "-1-0",                 // pid 1 is alive
      "m.safetensors.tmp-otherhost-" + dead + "-0",         // another host: by age only
      "m.safetensors.tmp-" + host + "-" + dead + "-x",      // not a name kiln makes
      "m.safetensors.tmp-notes",                            // nor this
      "other.safetensors.tmp-" + host + "-" + dead + "-0",  // another path's
  };
  for (const std::string& name : kept) write_aged(scratch.path(name), minutes);
  // a dead pid's file written a moment ago may be a live save in another PID namespace
  const std::string fresh = "m.safetensors.tmp-" + host + "-" + dead + "-1";
  write_aged(scratch.path(fresh), 0);

  save({{"a", ones({2})}}, scratch.path("m.safetensors"));
  for (const std::string& name : stale) {
    BOOST_TEST(!exists(scratch, name), name << " should have been removed");
  }
  for (const std::string& name : kept) BOOST_TEST(exists(scratch, name), name << " was removed");
  BOOST_TEST(exists(scratch, fresh));
  BOOST_TEST(load(scratch.path("m.safetensors"))[0].second.equal(ones({2})));
  // what this process's save itself creates is gone once it returns
  std::vector<std::string> files = scratch.files();
  BOOST_TEST(std::count_if(files.begin(), files.end(), [&](const std::string& f) {
               return f.rfind("m.safetensors.tmp-" + host + "-" + self + "-", 0) == 0;
             }) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
