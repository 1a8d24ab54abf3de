// kiln-plugin-check: checks one plugin file the way kiln will use it, for the plugin's author.
//
//   kiln-plugin-check PATH [--filter TEXT] [--no-gradients] [--fuzz-seconds N] [--verbose]
//
// It loads PATH before any other plugin (so a plugin of the same name in the plugin folder is the
// one refused), prints its state and what it registered (devices, kernels, data sources,
// decoders), and, for each device it registered, runs kiln's operator conformance suite
// (tools/conformance, linked in) on that device against references computed on the CPU: every
// case in each of its dtypes and input layouts, PyTorch's golden records when the golden file is
// found, and the gradients of each differentiable case against the CPU's. For each data source
// it registered, it reads the source's sample corpus through it and runs the source's fuzz
// harness for N seconds (default 10; see Note [A source ships its checks]). It ends with a
// summary by operator and by dtype, and what to do next. Exit status: 0 when every check passed,
// 1 when one failed or the plugin did not load, 2 for a bad command line.
#include "check.h"
#include "golden.h"
#include "plugin_check_source.h"

#include <kiln/data/source.h>
#include <kiln/kiln.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using conformance::Case;

struct Options {
  std::string path;
  std::string filter;
  bool gradients = true;
  bool verbose = false;
  double fuzz_seconds = 10;  // each data source's fuzz harness
};

int usage(const std::string& problem) {
  std::cerr << "kiln-plugin-check: " << problem << "\n"
            << "usage: kiln-plugin-check PATH [--filter TEXT] [--no-gradients] "
            << "[--fuzz-seconds N] [--verbose]\n"
            << "  loads the plugin file PATH, lists what it registers and runs kiln's operator\n"
            << "  conformance suite on each of its devices against the CPU; reads each data\n"
            << "  source's sample corpus through it and fuzzes it for N seconds (default 10)\n";
  return 2;
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Prints a list in lines of about 100 columns, indented.
void print_wrapped(const std::vector<std::string>& items, const std::string& indent) {
  std::string line = indent;
  for (const std::string& s : items) {
    if (line.size() + s.size() + 1 > 100 && line.size() > indent.size()) {
      std::cout << line << "\n";
      line = indent;
    }
    line += s + " ";
  }
  if (line.size() > indent.size()) std::cout << line << "\n";
}

// Counts of passed and failed checks.
struct Tally {
  int passed = 0, failed = 0;
};

struct Report {
  std::map<std::string, Tally> by_operator;  // forward checks
  std::map<std::string, Tally> by_dtype;     // forward checks
  std::map<std::string, Tally> gradients;    // by operator
  std::vector<std::string> failures;         // the first lines, for the summary
  int failure_lines = 0;
};

// What the plugin registered, printed; returns its device types.
std::vector<kiln::DeviceType> print_registrations(const kiln::PluginInfo& info) {
  std::cout << "registers:\n";
  std::vector<kiln::DeviceType> types;
  for (const std::string& name : info.devices) {
    kiln::DeviceType type = kiln::Device(name).type();
    types.push_back(type);
    std::vector<std::string> devices;
    for (const kiln::Device& d : kiln::devices()) {
      if (d.type() == type) devices.push_back(kiln::device_description(d));
    }
    std::cout << "  device type '" << name << "': " << devices.size() << " device"
              << (devices.size() == 1 ? "" : "s") << "\n";
    for (const std::string& d : devices) std::cout << "    " << d << "\n";
    std::vector<std::string> kernels, missing, optional;
    for (const kiln::OperatorBase* op : kiln::all_operators()) {
      if (op->has_plugin_kernel(type)) {
        kernels.push_back(op->name());
      } else if (op->is_primitive() && op->has_plugin_kernel(kiln::kCPU)) {
        (op->is_optional() ? optional : missing).push_back(op->name());
      }
    }
    std::cout << "    kernels (" << kernels.size() << "):\n";
    print_wrapped(kernels, "      ");
    if (!missing.empty()) {
      std::cout << "    primitives without a kernel here (" << missing.size() << "):\n";
      print_wrapped(missing, "      ");
    }
    if (!optional.empty()) {
      std::cout << "    optional primitives without a kernel here (core composes them; "
                << optional.size() << "):\n";
      print_wrapped(optional, "      ");
    }
  }
  std::vector<std::string> sources, decoders;
  for (const kiln::data::SourceInfo& s : kiln::data::sources()) {
    if (s.plugin == info.path) sources.push_back(s.name);
  }
  for (const kiln::data::SourceInfo& s : kiln::data::decoders()) {
    if (s.plugin == info.path) decoders.push_back(s.name);
  }
  if (!sources.empty()) std::cout << "  data sources: " << join(sources) << "\n";
  if (!decoders.empty()) std::cout << "  decoders (by extension): " << join(decoders) << "\n";
  if (types.empty() && sources.empty() && decoders.empty()) std::cout << "  nothing\n";
  return types;
}

// Runs the forward cases on `devices`, one dtype at a time so that the report has dtypes.
void run_forward(const std::vector<kiln::Device>& devices, const Options& opt, bool golden,
                 Report& report) {
  for (const Case& c : conformance::all_cases()) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos &&
        c.op.find(opt.filter) == std::string::npos) {
      continue;
    }
    if (c.golden && !golden) continue;
    std::vector<std::vector<kiln::ScalarType>> groups;
    if (c.golden) {
      groups.push_back({});
    } else {
      for (kiln::ScalarType d : c.dtypes) groups.push_back({d});
    }
    for (const auto& dtypes : groups) {
      Case one = c;
      one.dtypes = dtypes;
      int failed = 0;
      auto sink = [&](const std::string& where, const std::string& what) {
        ++failed;
        if (++report.failure_lines <= 40 || opt.verbose) {
          std::cout << "  FAIL " << where << ": " << what << "\n";
        }
        if (report.failures.size() < 10) report.failures.push_back(where + ": " + what);
      };
      if (c.golden) {
        conformance::run_golden_case(one, devices, sink);
      } else {
        conformance::run_reference_case(one, devices, sink);
      }
      std::string dtype = c.golden ? "golden (PyTorch)" : kiln::dtype_name(dtypes[0]);
      Tally& op = report.by_operator[c.op];
      Tally& dt = report.by_dtype[dtype];
      (failed ? op.failed : op.passed)++;
      (failed ? dt.failed : dt.passed)++;
      if (opt.verbose && failed == 0) std::cout << "  ok   " << c.name << " [" << dtype << "]\n";
    }
  }
}

void run_gradients(const std::vector<kiln::Device>& devices, const Options& opt, Report& report) {
  for (const Case& c : conformance::all_cases()) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos &&
        c.op.find(opt.filter) == std::string::npos) {
      continue;
    }
    for (const kiln::Device& device : devices) {
      int failed = 0;
      bool checked = conformance::run_gradient_case(
          c, device, [&](const std::string& where, const std::string& what) {
            ++failed;
            if (++report.failure_lines <= 40 || opt.verbose) {
              std::cout << "  FAIL " << where << ": " << what << "\n";
            }
            if (report.failures.size() < 10) report.failures.push_back(where + ": " + what);
          });
      if (!checked) continue;
      Tally& t = report.gradients[c.op];
      (failed ? t.failed : t.passed)++;
      if (opt.verbose && failed == 0) std::cout << "  ok   " << c.name << " [gradient]\n";
    }
  }
}

void print_tallies(const std::string& title, const std::map<std::string, Tally>& tallies) {
  Tally total;
  std::vector<std::string> failing;
  for (const auto& [name, t] : tallies) {
    total.passed += t.passed;
    total.failed += t.failed;
    if (t.failed) failing.push_back(name + " (" + std::to_string(t.failed) + ")");
  }
  std::cout << "  " << title << ": " << total.passed << " passed, " << total.failed << " failed\n";
  if (!failing.empty()) print_wrapped(failing, "    failing: ");
}

// The data-source checks of the sources the plugin registered; returns the failures.
int check_sources(const kiln::PluginInfo& info, const Options& opt) {
  std::vector<std::string> schemes;
  for (const kiln::data::SourceInfo& s : kiln::data::sources()) {
    if (s.plugin == info.path) schemes.push_back(s.name);
  }
  return plugin_check::check_data_sources(info.path, schemes, opt.fuzz_seconds);
}

// Parses the value of --fuzz-seconds; false when it is not a number of seconds >= 0.
bool parse_seconds(const std::string& text, double& out) {
  try {
    size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size() && out >= 0 && out < 1e7;
  } catch (const std::exception&) {
    return false;
  }
}

int check(const Options& opt) {
  // one summary line instead of a warning per operator (Note [CPU fallback warnings])
  kiln::set_fallback_warnings(false);
  kiln::PluginInfo info = kiln::load_plugin(opt.path);  // first: before the folder's plugins
  kiln::load_plugins();
  std::cout << "plugin file: " << info.path << "\n";
  if (!info.name.empty()) {
    std::cout << "  name: " << info.name << "  version: " << info.version
              << "  abi: " << info.abi_major << "." << info.abi_minor
              << " (this kiln: " << kiln::core_abi_major() << "." << kiln::core_abi_minor()
              << ")\n";
    if (!info.summary.empty()) std::cout << "  summary: " << info.summary << "\n";
  }
  std::cout << "  state: " << kiln::plugin_state_name(info.state) << "\n";
  if (info.state != kiln::PluginState::Loaded) {
    std::cout << "  reason: " << info.reason << "\n\n"
              << "summary: the plugin did not load; fix what the reason says and run again\n";
    return 1;
  }
  std::vector<kiln::DeviceType> types = print_registrations(info);
  if (int failed = check_sources(info, opt)) {
    std::cout << "\nsummary: " << failed << " data-source check" << (failed == 1 ? "" : "s")
              << " failed (above): a sample shard the source cannot read\n";
    return 1;
  }
  std::vector<kiln::Device> devices;
  for (const kiln::Device& d : kiln::devices()) {
    if (std::find(types.begin(), types.end(), d.type()) != types.end()) devices.push_back(d);
  }
  if (devices.empty()) {
    std::cout << "\nsummary: " << (types.empty() ? "no device type" : "no device found here")
              << ": no operator to check\n";
    return 0;
  }
  if (!kiln::is_available(kiln::kCPU)) {
    std::cout << "\nsummary: the CPU plugin is not loaded, and the checks compare with it: "
              << "install kiln's CPU plugin (kiln-info says why it did not load)\n";
    return 1;
  }
  std::vector<std::string> names;
  for (const kiln::Device& d : devices) names.push_back(d.str());
  bool golden = std::filesystem::exists(conformance::golden_file());
  std::cout << "\nconformance on " << join(names) << " against the CPU"
            << (golden ? ""
                       : " (no golden file at " + conformance::golden_file() +
                             ": PyTorch's records skipped; set KILN_GOLDEN_DIR)")
            << ":\n";
  Report report;
  run_forward(devices, opt, golden, report);
  if (opt.gradients) {
    std::cout << "gradients on " << join(names) << " against the CPU:\n";
    run_gradients(devices, opt, report);
  }
  if (report.failure_lines > 40 && !opt.verbose) {
    std::cout << "  ... " << report.failure_lines - 40 << " more failures (--verbose shows all)\n";
  }

  std::cout << "\nsummary for " << info.name << ":\n";
  print_tallies("forward, by operator", report.by_operator);
  print_tallies("forward, by dtype", report.by_dtype);
  for (const auto& [dtype, t] : report.by_dtype) {
    std::printf("    %-18s %4d passed %4d failed\n", dtype.c_str(), t.passed, t.failed);
  }
  if (opt.gradients) print_tallies("gradients, by operator", report.gradients);
  std::vector<std::string> fallback = kiln::fallback_operators();
  if (!fallback.empty()) {
    std::cout << "  CPU fallback: " << fallback.size() << " operator"
              << (fallback.size() == 1 ? "" : "s") << " ran on the CPU for want of a kernel "
              << "here (slow: copies both ways):\n";
    print_wrapped(fallback, "    ");
  }
  int failed = 0;
  for (const auto& [name, t] : report.by_operator) failed += t.failed;
  for (const auto& [name, t] : report.gradients) failed += t.failed;
  if (failed == 0) {
    std::cout << "all checks passed: kiln runs every operator on " << join(names)
              << " as on the CPU\n";
    return 0;
  }
  std::cout << "next steps:\n"
            << "  - docs/primitives.md says what each kernel receives (broadcast inputs, dtypes,\n"
            << "    strides, attributes) and must write; a failure in every dtype of one operator\n"
            << "    is usually the kernel's arithmetic, one in the 'strided' or 'transposed'\n"
            << "    layouts a kernel that assumes contiguous memory, one in 16-bit floats a\n"
            << "    missing float32 intermediate;\n"
            << "  - a gradient failure with passing forward checks is a kernel the backward pass\n"
            << "    uses (kiln-plugin-check --filter OPERATOR narrows the run);\n"
            << "  - a kernel that cannot handle a case may report an error\n"
            << "    (throw kiln::sdk::not_implemented) or leave the operator to CPU fallback.\n"
            << "first failures:\n";
  for (const std::string& f : report.failures) std::cout << "  " << f << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--filter" && i + 1 < argc) {
      opt.filter = argv[++i];
    } else if (arg == "--no-gradients") {
      opt.gradients = false;
    } else if (arg == "--fuzz-seconds" && i + 1 < argc) {
      if (!parse_seconds(argv[++i], opt.fuzz_seconds)) {
        return usage(std::string("--fuzz-seconds '") + argv[i] + "' is not a number of seconds");
      }
    } else if (arg == "--verbose") {
      opt.verbose = true;
    } else if (arg == "--help" || arg == "-h") {
      usage("checks a plugin");
      return 0;
    } else if (arg.rfind("--", 0) == 0 || !opt.path.empty()) {
      return usage("unknown or extra argument '" + arg + "'");
    } else {
      opt.path = arg;
    }
  }
  if (opt.path.empty()) return usage("no plugin file given");
  try {
    return check(opt);
  } catch (const std::exception& e) {
    std::cerr << "kiln-plugin-check: " << e.what() << "\n";
    return 1;
  }
}
