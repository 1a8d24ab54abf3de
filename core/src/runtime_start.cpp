// Everything kiln does once when its runtime starts, in one function: start_runtime().
//
// Note [Runtime start-up]: the runtime starts on first need (the first tensor, devices(),
// default_device(), a data source, load_plugins()), once per process, under a std::call_once
// (ensure_runtime_started), so every thread that goes on sees its work complete. Its steps, in
// this order:
//   1. OpenMP's environment (Note [OpenMP spin]; ThreadSanitizer builds: one OpenMP thread).
//      Before step 3: libgomp reads its settings when it is loaded, which is when the first
//      plugin that needs it loads.
//   2. The Autocast layer's kernels go into the operator tables. Before any tensor exists: every
//      thread that dispatches has made or received a tensor, so it sees the tables complete, and
//      no thread reads a table while another writes it.
//   3. The plugins of the search path (add_plugin_path(), KILN_PLUGIN_PATH, kiln's own folder)
//      load, each file in name order within its folder (plugin_loader.cpp).
// The environment read here is OMP_WAIT_POLICY, GOMP_SPINCOUNT, OMP_NUM_THREADS and
// KILN_PLUGIN_PATH. The rest is read where it is used, so a program may still set it after the
// start: KILN_DEVICE (each default_device()), KILN_VERBOSE (each plugin log line),
// KILN_FALLBACK_WARNINGS (each CPU fallback unless set_fallback_warnings() was called),
// KILN_CACHE_BYTES (the first cached block); plugins read their own (KILN_TAR_READER, ...) in
// their own code.
#include "runtime.h"

#include "amp/policy.h"

#include <kiln/plugin.h>

#include <cstdlib>
#include <mutex>

namespace kiln {
namespace detail {
namespace {

// Note [OpenMP spin]: oneDNN (in the CPU plugin) runs on GNU OpenMP, whose idle threads spin
// after every call and take the second core from TBB loops (2x slower on 2 cores, measured on a
// 2-core machine). The default set here is a short spin that keeps back-to-back matmuls fast.
// A value the user set wins.
void set_openmp_environment() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("GOMP_SPINCOUNT", "10000", 0);
#ifdef KILN_SANITIZE_THREAD
  // ThreadSanitizer sees no synchronization inside the uninstrumented libgomp: one thread.
  setenv("OMP_NUM_THREADS", "1", 0);
#endif
}

// See Note [Runtime start-up] for the steps and their order.
void start_runtime() {
  set_openmp_environment();
  amp::detail::install_autocast_layer();
  load_search_path_plugins();
}

}  // namespace

void ensure_runtime_started() {
  static std::once_flag once;
  std::call_once(once, start_runtime);
}

}  // namespace detail

void load_plugins() { detail::ensure_runtime_started(); }

}  // namespace kiln
