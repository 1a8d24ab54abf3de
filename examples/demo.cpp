// kiln's demo: what kiln is for. It writes the checkerboard problem of "Effective PyTorch" (its
// mixed-precision chapter) as tar shards (see Note [Samples are whole boards] in demo_steps.cpp),
// trains the article's network from them through a DataLoader with worker threads on the best
// device, once in float32 and once under autocast with GradScaler (live progress, then both times
// and the speed-up), saves and reloads a checkpoint, and draws what the network learned beside the
// target, and the loss curves. `--tour` runs the article's tensor examples instead.
#include <kiln/kiln.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "demo.h"
#include "options.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln-demo [--quick] [--out DIR] [--size N] [--samples N]\n"
    "                 [--squares N] [--steps N] [--warmup N] [--batch N] [--workers N]\n"
    "       kiln-demo --tour [--quick]\n"
    "\n"
    "  --quick      a small run for CI: --size 32 --samples 16 --steps 30 --warmup 3\n"
    "  --out DIR    folder for the shards, the checkpoint and the pictures\n"
    "               (default: kiln-demo-out in the current directory)\n"
    "  --size N     each sample is the board at N x N points, 4 to 1024 (40)\n"
    "  --samples N  samples written, a multiple of 4 (128)\n"
    "  --squares N  squares along each side of the checkerboard, 2 to 64 (8)\n"
    "  --steps N    Adam steps of each run, float32 then autocast (1000)\n"
    "  --warmup N   first steps of each run left out of the timing (5)\n"
    "  --batch N    samples per batch (1)\n"
    "  --workers N  DataLoader worker threads, 0 to 4 (2)\n"
    "  --tour       Effective PyTorch's tensor examples instead (basics, broadcasting, operators)\n"
    "\n"
    "The device is kiln's best one (KILN_DEVICE=cpu chooses another).\n";

// Usage errors (exit status 2) are kiln::ValueError naming the option.
using UsageError = kiln::ValueError;

int64_t parse_int(const std::string& option, const std::string& text, int64_t lo, int64_t hi,
                  const char* what) {
  return example_options::parse_int("kiln-demo", option, text, lo, hi, what);
}

struct ParsedOptions {
  DemoOptions options;
  bool help = false;
};

ParsedOptions parse_options(int argc, char** argv) {
  ParsedOptions parsed;
  DemoOptions& o = parsed.options;
  std::optional<int64_t> size, samples, squares, steps, warmup, batch, workers;
  std::string first_training_option;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take_value = [&]() -> const std::string& {
      if (!has_value) {
        if (i + 1 >= argc) throw UsageError("kiln-demo: " + arg + " needs a value");
        value = argv[++i];
        has_value = true;
      }
      return value;
    };
    auto flag = [&](bool& target) {
      if (has_value) throw UsageError("kiln-demo: " + arg + " takes no value");
      target = true;
    };
    auto number = [&](std::optional<int64_t>& target, int64_t lo, int64_t hi, const char* what) {
      target = parse_int(arg, take_value(), lo, hi, what);
      if (first_training_option.empty()) first_training_option = arg;
    };
    if (arg == "--help" || arg == "-h") {
      flag(parsed.help);
    } else if (arg == "--tour") {
      flag(o.tour);
    } else if (arg == "--quick") {
      flag(o.quick);
    } else if (arg == "--out") {
      o.out = take_value();
      if (o.out.empty()) throw UsageError("kiln-demo: --out: expected a folder, got ''");
      if (first_training_option.empty()) first_training_option = arg;
    } else if (arg == "--size") {
      number(size, 4, 1024, "a number of points");
    } else if (arg == "--samples") {
      number(samples, kShards, 1000000, "a number of samples");
      if (*samples % kShards != 0) {
        throw UsageError(kiln::detail::str("kiln-demo: --samples: expected a multiple of ", kShards,
                                           " (the shards), got '", value, "'"));
      }
    } else if (arg == "--squares") {
      number(squares, 2, 64, "a number of squares");
    } else if (arg == "--steps") {
      number(steps, 1, 1000000, "a number of steps");
    } else if (arg == "--warmup") {
      number(warmup, 0, 1000000, "a number of steps");
    } else if (arg == "--batch") {
      number(batch, 1, 1000000, "a number of samples");
    } else if (arg == "--workers") {
      number(workers, 0, kShards, "a number of threads");
    } else {
      throw UsageError("kiln-demo: unknown option '" + std::string(argv[i]) +
                       "' (kiln-demo --help lists them)");
    }
  }
  if (o.tour && !first_training_option.empty()) {
    throw UsageError("kiln-demo: " + first_training_option +
                     " is an option of the training demo, not of --tour");
  }
  if (o.out.empty()) o.out = "kiln-demo-out";
  o.size = size.value_or(o.quick ? 32 : o.size);
  o.samples = samples.value_or(o.quick ? 16 : o.samples);
  o.squares = squares.value_or(o.squares);
  o.steps = steps.value_or(o.quick ? 30 : o.steps);
  o.warmup = warmup.value_or(o.quick ? 3 : o.warmup);
  o.batch = batch.value_or(o.batch);
  o.workers = workers.value_or(o.workers);
  if (o.warmup >= o.steps) {
    throw UsageError(kiln::detail::str("kiln-demo: --warmup ", o.warmup, " leaves none of the ",
                                       o.steps,
                                       " --steps to time: give more steps or less "
                                       "warmup"));
  }
  // Each worker reads whole shards: the fewest samples a worker gets in an epoch.
  int64_t least = kShards / std::max<int64_t>(o.workers, 1) * (o.samples / kShards);
  if (o.batch > least) {
    throw UsageError(kiln::detail::str("kiln-demo: --batch ", o.batch,
                                       ": a worker reads as few "
                                       "as ",
                                       least, " samples an epoch (--samples ", o.samples,
                                       ", --workers ", o.workers,
                                       "), so no batch would be "
                                       "full: use at most ",
                                       least));
  }
  return parsed;
}

}  // namespace

int main(int argc, char** argv) {
  ParsedOptions parsed;
  try {
    parsed = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const DemoOptions& options = parsed.options;
  if (parsed.help) {
    std::printf("%s", kUsage);
    return 0;
  }
  try {
    kiln::load_plugins();
    std::printf("plugins:");
    for (const kiln::PluginInfo& p : kiln::plugins()) {
      std::printf(" %s %s (%s%s%s)", p.name.c_str(), p.version.c_str(),
                  kiln::plugin_state_name(p.state), p.reason.empty() ? "" : ": ", p.reason.c_str());
    }
    std::printf("\ndevices:");
    for (const kiln::Device& d : kiln::devices()) std::printf(" %s", d.str().c_str());
    kiln::Device device = kiln::default_device();
    std::printf(", running on %s\n", device.str().c_str());
    std::fflush(stdout);
    if (options.tour) {
      run_tour(device, options.quick);
    } else {
      run_training_demo(options, device);
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("kiln-demo: ", 0) == 0) what.erase(0, std::strlen("kiln-demo: "));
    std::fflush(stdout);
    std::fprintf(stderr, "\nkiln-demo: error: %s\n", what.c_str());
    return 1;
  }
  return 0;
}
