// The runtime's start (Note [Runtime start-up] in core/src/runtime_start.cpp) in a process of
// its own, so nothing of kiln has started before the test: its steps run once, whichever
// threads ask first, and OpenMP's environment is set before the plugin that loads OpenMP.
#define BOOST_TEST_MODULE runtime_start
#include <boost/test/unit_test.hpp>

#include <kiln/kiln.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

// What `fn` writes to stderr (file descriptor 2).
template <class Fn>
std::string stderr_of(Fn fn) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  BOOST_REQUIRE(tmp != nullptr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  fn();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string out;
  std::rewind(tmp);
  for (int c = std::fgetc(tmp); c != EOF; c = std::fgetc(tmp)) out += static_cast<char>(c);
  std::fclose(tmp);
  return out;
}

bool openmp_loaded() { return dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr; }

}  // namespace

BOOST_AUTO_TEST_CASE(the_runtime_starts_once_with_its_steps_in_order) {
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("GOMP_SPINCOUNT");
  // Before the start: no OpenMP in the process, no Autocast layer on the operators.
  BOOST_REQUIRE(!openmp_loaded());
  const kiln::OperatorBase* mm = kiln::find_operator("mm");
  BOOST_REQUIRE(mm != nullptr);
  BOOST_REQUIRE(!mm->has_layer(kiln::DispatchKey::Autocast));

  // First need from several threads at once: one start, and each thread sees all of it.
  std::vector<std::vector<kiln::Device>> seen(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] { seen[i] = kiln::devices(); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::vector<kiln::Device>& devices : seen) BOOST_TEST(devices == kiln::devices());
  std::set<std::string> files;
  for (const kiln::PluginInfo& p : kiln::plugins()) {
    BOOST_TEST(files.insert(p.path).second, p.path << " was loaded twice");
  }

  // Step 2: the Autocast layer is installed.
  BOOST_TEST(mm->has_layer(kiln::DispatchKey::Autocast));
  // Step 1: OpenMP's default spin, set for the plugins.
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  BOOST_REQUIRE(spin != nullptr);
  BOOST_TEST(std::string(spin) == "10000");
  // ... before step 3 loaded the CPU plugin and, with it, OpenMP, which read it then.
  if (!kiln::is_available(kiln::kCPU)) return;  // (the CPU plugin is not built)
  BOOST_REQUIRE(openmp_loaded());
  void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto display_env = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_display_env"));
  BOOST_REQUIRE(display_env != nullptr);
  std::string shown = stderr_of([&] { display_env(1); });
  BOOST_TEST(shown.find("GOMP_SPINCOUNT = '10000'") != std::string::npos, shown);
  dlclose(gomp);
}
