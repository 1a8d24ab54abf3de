// kiln-plugin-check's data-source checks. See plugin_check_source.h.
//
// Note [A source ships its checks]
// A data source parses bytes from outside, so it ships two checks with itself, as optional
// exports of its plugin (kiln/sdk/plugin.h; KILN_SOURCE_PLUGIN writes them):
// kiln_source_sample_shard, a few small valid shards (its sample corpus), and kiln_source_fuzz,
// its fuzz harness (bytes read as one shard). kiln-plugin-check writes each sample shard to a
// file and reads it through kiln::data::open like a user would, with decoding; a shard that
// does not read cleanly is a failure. Then it runs the harness on mutations of the corpus
// (truncations, flipped and inserted bytes, copied ranges, splices) for a while, deterministic
// for a seed. A crash or a hang (one input over kHangSeconds) stops the tool with the input
// saved to a file, to replay with the same harness under a debugger or sanitizers (a libFuzzer
// target can call kiln_source_fuzz too; tests/data/fuzz_tar.cpp is the tar source's).
#include "plugin_check_source.h"

#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace plugin_check {
namespace {

using SampleShardFn = int32_t (*)(const char*, int32_t, void (*)(void*, const void*, uint64_t),
                                  void*);
using FuzzFn = int32_t (*)(const char*, const void*, uint64_t);

constexpr int kHangSeconds = 20;
constexpr size_t kMaxInput = size_t{1} << 20;
constexpr int32_t kMaxSampleShards = 64;

// The input being fuzzed, for the crash handler and the watchdog.
std::string g_input;
char g_crash_path[512];

void save_input(const char* path) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  for (size_t done = 0; done < g_input.size();) {
    ssize_t n = ::write(fd, g_input.data() + done, g_input.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// Async-signal-safe: saves the input, says where, and dies of the same signal.
extern "C" void on_crash(int sig) {
  save_input(g_crash_path);
  const char head[] =
      "\nkiln-plugin-check: FAIL: the source's fuzz harness crashed; input saved to ";
  ssize_t ignored = ::write(2, head, sizeof head - 1);
  ignored = ::write(2, g_crash_path, std::strlen(g_crash_path));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<std::string> sample_shards(SampleShardFn fn, const std::string& scheme) {
  std::vector<std::string> shards;
  auto emit = [](void* ctx, const void* data, uint64_t size) {
    const auto* p = static_cast<const char*>(data);
    static_cast<std::vector<std::string>*>(ctx)->emplace_back(p, p + size);
  };
  for (int32_t i = 0; i < kMaxSampleShards; ++i) {
    size_t before = shards.size();
    if (fn(scheme.c_str(), i, emit, &shards) == 0 || shards.size() != before + 1) break;
  }
  return shards;
}

// Reads the corpus through kiln::data::open, as a user would; returns the failures.
int read_corpus(const std::string& scheme, const std::vector<std::string>& shards) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("kiln-plugin-check-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int failed = 0;
  int64_t samples = 0;
  std::set<std::string> fields;
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string path = (dir / ("sample-" + std::to_string(i))).string();
    std::ofstream(path, std::ios::binary)
        .write(shards[i].data(), static_cast<std::streamsize>(shards[i].size()));
    try {
      auto ds = kiln::data::open(scheme + ":" + path);
      auto stream = ds->iter(kiln::data::WorkerInfo{});
      while (std::optional<kiln::data::Sample> s = stream->next()) {
        ++samples;
        for (const auto& [name, value] : s->map()) {
          if (name.rfind("__", 0) != 0) fields.insert(name);
        }
      }
    } catch (const std::exception& e) {
      ++failed;
      std::cout << "  FAIL sample shard " << i << ": " << e.what() << "\n";
    }
  }
  std::filesystem::remove_all(dir);
  std::string names;
  for (const std::string& f : fields) names += (names.empty() ? "" : ", ") + f;
  std::cout << "  sample corpus: " << shards.size() << " shards read through the source, "
            << samples << " samples" << (names.empty() ? "" : " (fields: " + names + ")")
            << (failed ? ", " + std::to_string(failed) + " failed" : "") << "\n";
  return failed;
}

// One damaged copy of an entry of the corpus (not empty).
std::string mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  std::string b = corpus[pick(corpus.size())];
  for (int round = 0, rounds = 1 + static_cast<int>(pick(3)); round < rounds; ++round) {
    switch (pick(6)) {
      case 0: b.resize(pick(b.size() + 1)); break;  // truncated
      case 1:                                       // flipped bytes
        for (int i = 0, n = 1 + static_cast<int>(pick(8)); i < n && !b.empty(); ++i) {
          b[pick(b.size())] ^= static_cast<char>(1 + pick(255));
        }
        break;
      case 2: {  // inserted bytes, random or one repeated
        std::string add(1 + pick(64), static_cast<char>(rng()));
        if (rng() % 2) {
          for (char& c : add) c = static_cast<char>(rng());
        }
        b.insert(pick(b.size() + 1), add);
        break;
      }
      case 3: {  // a range copied over another place
        if (b.empty()) break;
        size_t from = pick(b.size()), n = 1 + pick(std::min<size_t>(b.size() - from, 1024));
        std::string range = b.substr(from, n);
        b.replace(pick(b.size()), n, range);
        break;
      }
      case 4:  // an interesting value (ASCII digits and extremes land in size fields)
        if (!b.empty())
          b[pick(b.size())] = "\x00\xff\x7f\x80"
                              "0179 "[pick(9)];
        break;
      default: {  // spliced with another entry
        const std::string& other = corpus[pick(corpus.size())];
        b = b.substr(0, pick(b.size() + 1)) + other.substr(pick(other.size() + 1));
      }
    }
  }
  if (b.size() > kMaxInput) b.resize(kMaxInput);
  return b;
}

// Runs the harness on mutations for `seconds`; a hang ends the process (after saving the input).
void fuzz(FuzzFn fn, const std::string& scheme, const std::vector<std::string>& corpus,
          double seconds) {
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/kiln-plugin-check-crash-%s-%d",
                std::filesystem::current_path().c_str(), scheme.c_str(), ::getpid());
  std::cout.flush();  // what was printed stays, should the harness crash
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_crash);
  std::atomic<uint64_t> runs{0};
  std::mutex mutex;
  std::condition_variable stop;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t last = ~uint64_t{0};
    auto since = std::chrono::steady_clock::now();
    while (!stop.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
      uint64_t now = runs.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - since > std::chrono::seconds(kHangSeconds)) {
        std::string path = std::string(g_crash_path) + ".hang";
        save_input(path.c_str());
        std::cout << "  FAIL fuzz: one input ran over " << kHangSeconds
                  << " s (a hang); input saved to " << path << std::endl;
        std::_Exit(1);
      }
    }
  });
  std::mt19937_64 rng(20261124);
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (const std::string& c : corpus) {  // the corpus itself first
    g_input = c;
    fn(scheme.c_str(), g_input.data(), g_input.size());
    ++runs;
  }
  while (std::chrono::steady_clock::now() < end) {
    g_input = mutate(corpus, rng);
    fn(scheme.c_str(), g_input.data(), g_input.size());
    ++runs;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  stop.notify_all();
  watchdog.join();
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  std::cout << "  fuzz harness: " << runs.load() << " inputs in " << seconds
            << " s from the sample corpus: no crash, no hang\n";
}

}  // namespace

int check_data_sources(const std::string& path, const std::vector<std::string>& schemes,
                       double fuzz_seconds) {
  if (schemes.empty()) return 0;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  auto sample_fn =
      handle ? reinterpret_cast<SampleShardFn>(::dlsym(handle, "kiln_source_sample_shard"))
             : nullptr;
  auto fuzz_fn = handle ? reinterpret_cast<FuzzFn>(::dlsym(handle, "kiln_source_fuzz")) : nullptr;
  int failed = 0;
  for (const std::string& scheme : schemes) {
    std::cout << "\ndata source '" << scheme << "':\n";
    std::vector<std::string> corpus;
    if (sample_fn == nullptr) {
      std::cout << "  sample corpus: none (the plugin does not export kiln_source_sample_shard;"
                << " see docs/writing-a-data-source.md)\n";
    } else {
      corpus = sample_shards(sample_fn, scheme);
      if (corpus.empty()) {
        std::cout << "  sample corpus: none (declare Source::sample_shards(); see "
                  << "docs/writing-a-data-source.md)\n";
      } else {
        failed += read_corpus(scheme, corpus);
      }
    }
    if (fuzz_fn == nullptr) {
      std::cout << "  fuzz harness: none (the plugin does not export kiln_source_fuzz)\n";
    } else if (corpus.empty()) {
      std::cout << "  fuzz harness: not run (its inputs are mutations of the sample corpus)\n";
    } else if (fuzz_seconds > 0) {
      fuzz(fuzz_fn, scheme, corpus, fuzz_seconds);
    }
  }
  if (handle != nullptr) ::dlclose(handle);  // drops the reference RTLD_NOLOAD took
  return failed;
}

}  // namespace plugin_check
