// kiln-onnx-testdata: runs ONNX's backend test data (Debian's libonnx-testdata: the node,
// simple, pytorch-converted and pytorch-operator folders) through kiln::onnx and compares each
// output with the stored one at ONNX's backend tolerances (rtol 1e-3, atol 1e-7, as
// onnx/backend/test/runner). Prints one line per test (passed, FAILED and why, or not supported
// and what) and a summary per folder; exits 1 when a model kiln supports fails and is not on
// the known-failures list.
//
//   kiln-onnx-testdata <data-dir> [--known-failures file] [--only name-substring] [--quiet]
//                      [--folders a,b,...] [--rtol r] [--atol a] [--require n] [--no-convert]
// --folders: the subfolders of data-dir to run (default node,simple,pytorch-converted,
// pytorch-operator; "." runs the tests directly in data-dir).
#include <kiln/kiln.h>
#include <kiln/onnx.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace {

double kRtol = 1e-3;
double kAtol = 1e-7;

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0;; ++k) {
    fs::path p = dir / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// "" when equal within the tolerances; otherwise why not.
std::string compare(const kiln::Tensor& got, const kiln::Tensor& want, size_t k) {
  std::ostringstream why;
  if (got.dtype() != want.dtype()) {
    why << "output " << k << " is " << got.dtype() << ", expected " << want.dtype();
    return why.str();
  }
  if (got.sizes() != want.sizes()) {
    why << "output " << k << " has shape " << got.sizes() << ", expected " << want.sizes();
    return why.str();
  }
  kiln::Tensor g = got.to(kiln::kCPU).to(kiln::kDouble).contiguous();
  kiln::Tensor w = want.to(kiln::kDouble).contiguous();
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  const bool exact = !kiln::is_floating_point(want.dtype());
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double a = gp[i], b = wp[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!exact && std::abs(a - b) <= kAtol + kRtol * std::abs(b)) continue;
    why << "output " << k << " element " << i << " is " << a << ", expected " << b;
    return why.str();
  }
  return {};
}

// The operator a NotImplementedError names ("the operator X is not supported"), or its text.
std::string reason(const std::string& what) {
  auto at = what.find("the operator ");
  if (at != std::string::npos) {
    auto rest = what.substr(at + 13);
    return "operator " + rest.substr(0, rest.find(' '));
  }
  at = what.find("opset ");
  if (what.find("of the default domain is not supported") != std::string::npos) {
    return "opset " + what.substr(at + 6, what.find(' ', at + 6) - at - 6);
  }
  auto colon = what.rfind("): ");
  return colon == std::string::npos ? what : what.substr(colon + 3);
}

struct Tally {
  int passed = 0, failed = 0, known = 0, unsupported = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kiln-onnx-testdata <data-dir> [--known-failures file] [--only substr] "
                 "[--quiet]\n";
    return 2;
  }
  fs::path root = argv[1];
  std::set<std::string> known;
  std::string only;
  bool quiet = false;
  bool convert = true;  // --no-convert: refuse opsets before 13 instead of upgrading them
  int require = 0;      // --require N: fail unless at least N tests pass
  std::vector<std::string> folders = {"node", "simple", "pytorch-converted", "pytorch-operator"};
  for (int a = 2; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--known-failures" && a + 1 < argc) {
      std::ifstream in(argv[++a]);
      for (std::string line; std::getline(in, line);) {
        line = line.substr(0, line.find('#'));
        line.erase(std::remove_if(line.begin(), line.end(), ::isspace), line.end());
        if (!line.empty()) known.insert(line);
      }
    } else if (arg == "--only" && a + 1 < argc) {
      only = argv[++a];
    } else if (arg == "--folders" && a + 1 < argc) {
      folders.clear();
      std::stringstream list(argv[++a]);
      for (std::string f; std::getline(list, f, ',');) folders.push_back(f);
    } else if (arg == "--rtol" && a + 1 < argc) {
      kRtol = std::stod(argv[++a]);
    } else if (arg == "--atol" && a + 1 < argc) {
      kAtol = std::stod(argv[++a]);
    } else if (arg == "--require" && a + 1 < argc) {
      require = std::stoi(argv[++a]);
    } else if (arg == "--no-convert") {
      convert = false;
    } else if (arg == "--quiet") {
      quiet = true;
    }
  }
  std::map<std::string, Tally> tally;
  std::map<std::string, int> missing;
  std::vector<std::string> unexpected;
  for (const std::string& folder : folders) {
    fs::path dir = root / folder;
    if (!fs::exists(dir)) continue;
    std::vector<fs::path> tests;
    for (const auto& e : fs::directory_iterator(dir)) tests.push_back(e.path());
    std::sort(tests.begin(), tests.end());
    for (const auto& t : tests) {
      const std::string name = folder + "/" + t.filename().string();
      if (!only.empty() && name.find(only) == std::string::npos) continue;
      if (!fs::exists(t / "model.onnx")) continue;
      auto& tl = tally[folder];
      std::string status, why;
      try {
        // ONNX's test data is trusted: models of opsets before 13 are upgraded
        kiln::onnx::LoadOptions options;
        options.convert_opset = convert;
        auto model = kiln::onnx::load((t / "model.onnx").string(), options);
        for (const auto& e : fs::directory_iterator(t)) {
          if (!e.is_directory() || e.path().filename().string().rfind("test_data_set", 0) != 0) {
            continue;
          }
          std::vector<kiln::Tensor> inputs, expected;
          for (const auto& p : numbered(e.path(), "input_")) {
            inputs.push_back(kiln::onnx::load_tensor(p.string()));
          }
          for (const auto& p : numbered(e.path(), "output_")) {
            expected.push_back(kiln::onnx::load_tensor(p.string()));
          }
          auto outputs = model.run(inputs);
          if (outputs.size() != expected.size()) {
            why = "gave " + std::to_string(outputs.size()) + " outputs, expected " +
                  std::to_string(expected.size());
          }
          for (size_t k = 0; why.empty() && k < outputs.size(); ++k) {
            why = compare(outputs[k], expected[k], k);
          }
          if (!why.empty()) {
            why = e.path().filename().string() + ": " + why;
            break;
          }
        }
        status = why.empty() ? "passed" : "FAILED";
        if (why.empty() && !model.replays()) why = "interpreted: the graph reads values";
      } catch (const kiln::NotImplementedError& e) {
        status = "not supported";
        why = reason(e.what());
      } catch (const std::exception& e) {
        status = "FAILED";
        why = e.what();
      }
      if (status == "passed") {
        ++tl.passed;
      } else if (status == "not supported") {
        ++tl.unsupported;
        ++missing[why];
      } else if (known.count(name)) {
        ++tl.known;
        status = "FAILED (known)";
      } else {
        ++tl.failed;
        unexpected.push_back(name);
      }
      if (!quiet || status.rfind("FAILED", 0) == 0) {
        std::cout << name << ": " << status << (why.empty() ? "" : " (" + why + ")") << "\n";
      }
    }
  }
  std::cout << "\nsummary (rtol " << kRtol << ", atol " << kAtol << "):\n";
  for (const auto& [folder, tl] : tally) {
    const int total = tl.passed + tl.failed + tl.known + tl.unsupported;
    std::cout << "  " << folder << ": " << tl.passed << " passed, " << tl.failed << " failed, "
              << tl.known << " known failures, " << tl.unsupported << " not supported, of " << total
              << " (" << (total ? 100.0 * tl.passed / total : 0.0) << "% pass)\n";
  }
  std::vector<std::pair<int, std::string>> byc;
  for (const auto& [what, n] : missing) byc.emplace_back(n, what);
  std::sort(byc.rbegin(), byc.rend());
  std::cout << "not supported, by reason (tests):\n";
  for (const auto& [n, what] : byc) std::cout << "  " << n << "  " << what << "\n";
  int passed = 0;
  for (const auto& [folder, tl] : tally) passed += tl.passed;
  if (passed < require) {
    std::cout << "only " << passed << " tests passed, " << require << " required\n";
    return 1;
  }
  if (!unexpected.empty()) {
    std::cout << unexpected.size() << " supported models failed:\n";
    for (const auto& u : unexpected) std::cout << "  " << u << "\n";
    return 1;
  }
  return 0;
}
