// Runs every registered case on every loaded device and input layout, one Boost.Test case per
// registered case (suites "reference" and "pytorch"), plus the coverage checks: every operator
// of the primitive list has a case, and the golden file and the golden cases agree.
#include "check.h"
#include "golden.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>
#include <sstream>

namespace conformance {
namespace {

using namespace kiln;

// Collects failures of one Boost.Test case and reports the first few in full.
struct Failures {
  int count = 0;
  void add(const std::string& where, const std::string& what) {
    if (++count <= 12) BOOST_ERROR(where << ": " << what);
  }
  FailureSink sink() {
    return [this](const std::string& where, const std::string& what) { add(where, what); };
  }
  ~Failures() {
    if (count > 12) BOOST_ERROR(count - 12 << " more failures of this case not shown");
  }
};

void reference_test(const Case& c) {
  Failures failures;
  int calls = run_reference_case(c, devices(), failures.sink());
  BOOST_TEST(calls > 0, c.name << " made no call");
}

void golden_test(const Case& c) {
  Failures failures;
  int records = run_golden_case(c, devices(), failures.sink());
  BOOST_TEST(records > 0, c.name << ": no record in " << golden_file());
}

bool init_suite() {
  namespace utf = boost::unit_test;
  utf::framework::master_test_suite().p_name.value = "conformance";
  utf::test_suite* reference = BOOST_TEST_SUITE("reference");
  utf::test_suite* pytorch = BOOST_TEST_SUITE("pytorch");
  std::set<std::string> names[2];
  for (const Case& c : all_cases()) {
    if (!names[c.golden].insert(c.name).second) {
      throw std::runtime_error("conformance: two cases are named " + c.name);
    }
    const Case* p = &c;
    auto body = c.golden ? std::function<void()>([p] { golden_test(*p); })
                         : std::function<void()>([p] { reference_test(*p); });
    (c.golden ? pytorch : reference)->add(utf::make_test_case(body, c.name, c.file, c.line));
  }
  utf::framework::master_test_suite().add(reference);
  utf::framework::master_test_suite().add(pytorch);
  return true;
}

}  // namespace
}  // namespace conformance

// --- coverage -----------------------------------------------------------------------------------
namespace {

std::set<std::string> covered_ops() {
  std::set<std::string> ops;
  for (const conformance::Case& c : conformance::all_cases()) ops.insert(c.op);
  return ops;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(coverage)

// The operators of the CPU plugin's list (docs/primitives.md and the composites built on them).
BOOST_AUTO_TEST_CASE(every_listed_operator_has_a_case) {
  const char* listed[] = {
      "neg", "add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "abs",
      "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
      "relu", "clamp", "maximum", "minimum", "where", "gt", "ge", "lt", "le", "eq", "ne",
      "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
      "bitwise_xor", "bitwise_not", "add_", "sub_", "mul_", "div_", "pow_", "neg_", "abs_",
      "exp_", "log_", "sqrt_", "relu_", "sigmoid_", "tanh_", "clamp_", "masked_fill_",
      "operator+=", "operator-=", "operator*=", "operator/=", "sum", "mean", "prod", "max_dim",
      "min_dim", "argmax", "argmin", "amax", "amin", "logsumexp", "var", "std", "norm", "all",
      "any", "cat", "stack", "repeat", "gather", "index_select", "masked_fill", "one_hot",
      "tril", "triu", "matmul", "mm", "bmm", "addmm", "copy_", "to", "clone", "contiguous",
      "fill_", "uniform_", "normal_", "random_", "index_add", "scatter_add", "conv2d",
      "conv2d_backward_input", "conv2d_backward_weight"};
  std::set<std::string> ops = covered_ops();
  for (const char* op : listed) {
    BOOST_CHECK_MESSAGE(ops.count(op), op << " has no conformance case");
  }
}

// A new primitive with a CPU kernel and no case fails here: "a new operator without a case is
// incomplete".
BOOST_AUTO_TEST_CASE(every_primitive_with_a_kernel_has_a_case) {
  kiln::devices();  // loads the plugins
  std::set<std::string> ops = covered_ops();
  int primitives = 0;
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (!op->is_primitive() || !op->has_plugin_kernel(kiln::kCPU)) continue;
    ++primitives;
    BOOST_CHECK_MESSAGE(ops.count(op->name()), op->name() << " has a CPU kernel but no case");
  }
  BOOST_TEST_MESSAGE(primitives << " primitives with a CPU kernel");
}

BOOST_AUTO_TEST_CASE(golden_records_have_cases) {
  std::set<std::string> golden;
  for (const conformance::Case& c : conformance::all_cases()) {
    if (c.golden) golden.insert(c.name);
  }
  std::set<std::string> unknown;
  for (const conformance::GoldenRecord& r : conformance::golden_records()) {
    if (!golden.count(r.name)) unknown.insert(r.name);
  }
  for (const std::string& name : unknown) {
    BOOST_ERROR(name << " has records in the golden file but no registered golden case");
  }
  BOOST_TEST(!conformance::golden_records().empty());
  BOOST_TEST_MESSAGE(conformance::golden_records().size() << " golden records");
}

BOOST_AUTO_TEST_SUITE_END()

int main(int argc, char* argv[]) {
  return boost::unit_test::unit_test_main(&conformance::init_suite, argc, argv);
}
