// Runs every registered case on every loaded device and input layout, one Boost.Test case per
// registered case (suites "reference" and "pytorch"), plus the coverage checks: every operator
// of the primitive list has a case, and the golden file and the golden cases agree.
#include "golden.h"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>
#include <sstream>

namespace conformance {
namespace {

using namespace kiln;

// --- layouts ------------------------------------------------------------------------------------
struct Layout {
  const char* name;
  bool (*applies)(const Tensor&);
  Tensor (*apply)(const Tensor&);
};

bool always(const Tensor&) { return true; }
Tensor identity(const Tensor& t) { return t; }

bool can_transpose(const Tensor& t) { return t.dim() >= 2 && t.size(-1) > 1 && t.size(-2) > 1; }
// Same values, column-major in the last two dimensions.
Tensor transposed_copy(const Tensor& t) {
  return t.transpose(-2, -1).contiguous().transpose(-2, -1);
}

bool can_stride(const Tensor& t) { return t.dim() >= 1 && t.numel() > 0; }
// Same values, every other element of a buffer twice as long in the last dimension.
Tensor strided_copy(const Tensor& t) {
  std::vector<int64_t> sizes = t.sizes().vec();
  sizes.back() *= 2;
  Tensor view = zeros(sizes, t.options()).slice(-1, 0, std::nullopt, 2);
  view.copy_(t);
  return view;
}

const Layout kLayouts[] = {
    {"contiguous", always, identity},
    {"transposed", can_transpose, transposed_copy},
    {"strided", can_stride, strided_copy},
};

// --- comparison ---------------------------------------------------------------------------------
std::string format(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

// "" when actual matches expected; otherwise what differs.
std::string compare(const Tensor& actual, const Tensor& expected, ScalarType want, double scale) {
  if (!actual.defined()) return "the output is an undefined tensor";
  if (actual.dtype() != want) {
    return std::string("dtype ") + dtype_name(actual.dtype()) + ", expected " + dtype_name(want);
  }
  if (!actual.sizes().equals(expected.sizes())) {
    std::ostringstream out;
    out << "sizes " << actual.sizes() << ", expected " << expected.sizes();
    return out.str();
  }
  Tensor a = host_double(actual), e = host_double(expected);
  const double* pa = a.data_ptr<double>();
  const double* pe = e.data_ptr<double>();
  Tolerance tol = tolerance(want);
  bool is16 = want == kHalf || want == kBFloat16;
  double rtol = tol.rtol * (is16 ? scale : 1), atol = tol.atol * (is16 ? scale : 1);
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = pa[i], y = pe[i];
    if (want == kBool) y = y != 0 ? 1 : 0;
    bool ok = x == y || (std::isnan(x) && std::isnan(y)) ||
              (is_floating_point(want) && std::isfinite(y) &&
               std::abs(x - y) <= atol + rtol * std::abs(y));
    if (ok) continue;
    if (bad++ < 4) {
      first += (first.empty() ? "" : "; ") + std::string("[") + std::to_string(i) +
               "] = " + format(x) + ", expected " + format(y);
    }
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(a.numel()) + " values differ: " + first;
}

// Collects failures of one Boost.Test case and reports the first few in full.
struct Failures {
  int count = 0;
  void add(const std::string& where, const std::string& what) {
    if (++count <= 12) BOOST_ERROR(where << ": " << what);
  }
  ~Failures() {
    if (count > 12) BOOST_ERROR(count - 12 << " more failures of this case not shown");
  }
};

// Runs the call on each device and layout and compares with `expected`; returns the number of
// calls made.
int check_everywhere(const Case& c, const std::string& label, const Args& cpu_args,
                     const Outputs& expected, const std::vector<ScalarType>& want,
                     Failures& failures) {
  int calls = 0;
  for (const Device& device : devices()) {
    for (const Layout& layout : kLayouts) {
      bool any = false;
      for (const Tensor& t : cpu_args.tensors) any = any || layout.applies(t);
      if (layout.apply != identity && (!c.layouts || !any)) continue;
      std::string where = c.name + " [" + label + "] on " + device.str() + " (" + layout.name + ")";
      Outputs out;
      try {
        Args a = cpu_args;
        for (Tensor& t : a.tensors) {
          t = t.to(device, t.dtype(), /*copy=*/true);
          if (layout.applies(t)) t = layout.apply(t);
        }
        if (c.on_device) a = c.on_device(a);
        ++calls;
        out = c.run(a);
      } catch (const std::exception& e) {
        failures.add(where, std::string("threw: ") + e.what());
        continue;
      }
      if (out.size() != expected.size()) {
        failures.add(where, std::to_string(out.size()) + " outputs, expected " +
                                std::to_string(expected.size()));
        continue;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        std::string diff;
        try {
          diff = compare(out[i].to(Device(kCPU)), expected[i], want[i], c.tolerance_scale);
        } catch (const std::exception& e) {
          diff = std::string("reading the output threw: ") + e.what();
        }
        if (!diff.empty()) failures.add(where, "output " + std::to_string(i) + ": " + diff);
      }
    }
  }
  return calls;
}

void run_reference_case(const Case& c) {
  Failures failures;
  int calls = 0;
  for (ScalarType dtype : c.dtypes) {
    std::string label = dtype_name(dtype);
    Args args;
    Outputs expected;
    try {
      args = c.inputs(dtype);
      expected = c.reference(args, dtype);
    } catch (const std::exception& e) {
      failures.add(c.name + " [" + label + "]", std::string("the reference threw: ") + e.what());
      continue;
    }
    std::vector<ScalarType> want;
    for (size_t i = 0; i < expected.size(); ++i) {
      want.push_back(c.out_dtype ? c.out_dtype(dtype, i) : dtype);
    }
    calls += check_everywhere(c, label, args, expected, want, failures);
  }
  BOOST_TEST(calls > 0, c.name << " made no call");
}

void run_golden_case(const Case& c) {
  Failures failures;
  int records = 0;
  for (const GoldenRecord& r : golden_records()) {
    if (r.name != c.name) continue;
    ++records;
    std::vector<ScalarType> want;
    for (const Tensor& e : r.expected) want.push_back(e.dtype());
    check_everywhere(c, r.label, r.args, r.expected, want, failures);
  }
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
    auto body = c.golden ? std::function<void()>([p] { run_golden_case(*p); })
                         : std::function<void()>([p] { run_reference_case(*p); });
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
