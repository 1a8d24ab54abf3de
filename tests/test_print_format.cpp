// Checks kiln::detail::format_tensor against PyTorch's own printing: each case of
// tests/golden/print_cases.txt (made by make_print_golden.py) holds a tensor and its repr().
// The golden folder is KILN_GOLDEN_DIR, or the first argument after "--".
#define BOOST_TEST_MODULE print_format
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "print_format.h"

namespace {

using kiln::detail::format_tensor;
using kiln::detail::PrintInput;
using kiln::detail::PrintKind;

struct GoldenCase {
  std::string name;
  PrintInput input;
  std::string expected;
};

std::string golden_path() {
  const auto& suite = boost::unit_test::framework::master_test_suite();
  if (suite.argc > 1) return std::string(suite.argv[1]) + "/print_cases.txt";
#ifdef KILN_GOLDEN_DIR
  return std::string(KILN_GOLDEN_DIR) + "/print_cases.txt";
#else
  throw std::runtime_error("test_print_format: pass the golden folder after --");
#endif
}

// The words of `line` after its leading keyword, which must be `key`.
std::vector<std::string> fields(const std::string& line, const std::string& key) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word != key) throw std::runtime_error("print_cases.txt: expected '" + key + "': " + line);
  std::vector<std::string> out;
  while (in >> word) out.push_back(word);
  return out;
}

PrintKind parse_kind(const std::string& word) {
  if (word == "bool") return PrintKind::Bool;
  if (word == "int") return PrintKind::Integer;
  if (word == "float") return PrintKind::Floating;
  throw std::runtime_error("print_cases.txt: unknown kind " + word);
}

// "dtype <name> default <0|1> kind <k> requires_grad <0|1>"
void parse_dtype(const std::string& line, PrintInput& in) {
  const auto f = fields(line, "dtype");
  if (f.size() != 7) throw std::runtime_error("print_cases.txt: bad dtype line: " + line);
  in.dtype_name = f[0];
  in.dtype_is_default = f[2] == "1";
  in.kind = parse_kind(f[4]);
  in.requires_grad = f[6] == "1";
}

void parse_values(const std::string& line, PrintInput& in) {
  for (const std::string& word : fields(line, "values")) {
    if (in.kind == PrintKind::Floating) {
      in.floats.push_back(std::strtod(word.c_str(), nullptr));
    } else {
      in.ints.push_back(std::stoll(word));
    }
  }
}

std::string next_line(std::istream& file) {
  std::string line;
  if (!std::getline(file, line)) throw std::runtime_error("print_cases.txt: truncated");
  return line;
}

// Reads one case after its "case <name>" line.
GoldenCase parse_case(const std::string& name, std::istream& file) {
  GoldenCase c{name, {}, ""};
  parse_dtype(next_line(file), c.input);
  std::string line = next_line(file);
  if (line.rfind("grad_fn ", 0) == 0) c.input.grad_fn = fields(line, "grad_fn").at(0);
  if (line.rfind("grad_fn ", 0) == 0) line = next_line(file);
  if (line.rfind("device ", 0) == 0) c.input.device = fields(line, "device").at(0);
  if (line.rfind("device ", 0) == 0) line = next_line(file);
  for (const std::string& word : fields(line, "sizes")) c.input.sizes.push_back(std::stoll(word));
  parse_values(next_line(file), c.input);
  const int count = std::stoi(fields(next_line(file), "expect").at(0));
  for (int i = 0; i < count; ++i) c.expected += (i == 0 ? "" : "\n") + next_line(file);
  if (next_line(file) != "end") throw std::runtime_error("print_cases.txt: no end in " + name);
  return c;
}

std::vector<GoldenCase> load_cases() {
  std::ifstream file(golden_path());
  if (!file) throw std::runtime_error("cannot open " + golden_path());
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    if (!line.empty()) cases.push_back(parse_case(fields(line, "case").at(0), file));
  }
  return cases;
}

PrintInput floats(std::vector<int64_t> sizes, std::vector<double> values) {
  PrintInput in;
  in.sizes = std::move(sizes);
  in.floats = std::move(values);
  in.dtype_name = "float32";
  return in;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matches_pytorch_golden) {
  const std::vector<GoldenCase> cases = load_cases();
  BOOST_TEST(cases.size() >= 50u);
  for (const GoldenCase& c : cases) {
    BOOST_TEST_CONTEXT("case " << c.name) { BOOST_TEST(format_tensor(c.input) == c.expected); }
  }
}

BOOST_AUTO_TEST_CASE(prints_device_name) {
  PrintInput in = floats({2}, {1.0, 2.5});
  in.device = "cuda:0";
  in.grad_fn = "AddBackward0";
  in.requires_grad = true;
  BOOST_TEST(format_tensor(in) ==
             "tensor([1.0000, 2.5000], device='cuda:0', grad_fn=<AddBackward0>)");
}

BOOST_AUTO_TEST_CASE(prints_every_nan_as_nan) {
  BOOST_TEST(format_tensor(floats({2}, {-std::numeric_limits<double>::quiet_NaN(), 1.0})) ==
             "tensor([nan, 1.])");
}

BOOST_AUTO_TEST_CASE(rejects_wrong_value_count) {
  BOOST_CHECK_THROW(format_tensor(floats({2, 2}, {1.0})), std::invalid_argument);
}
