// kiln's operator conformance suite: each operator registers its cases once, in the file of its
// family (cases_*.cpp), and the runner (runner.cpp) runs every case on every loaded device
// (kiln::devices()), for every dtype the case lists, on contiguous, transposed and strided copies
// of its inputs. Inputs move with `.to(device)` and results come back with `.to(kCPU)`, so a new
// device plugin is tested by this suite without a line of new test code.
//
// A case's expected outputs come from one of two places:
//   - a reference computed in the test, in float64 on the host (elementwise and reduction
//     formulas written in plain C++ in reference.cpp) or by kiln in float64 on the CPU, compared
//     with a tolerance per dtype (exact for integers and bool);
//   - PyTorch itself: a golden case reads its inputs and PyTorch's outputs from
//     tests/golden/conformance_cases.txt (written by tests/golden/make_conformance_golden.py),
//     one record per (case name, label); the C++ side only says how to call the operator.
//
// Adding an operator means adding its cases next to those of its family:
//
//   add_case({.name = "exp",
//             .op = "exp",
//             .gradient = true,
//             .dtypes = kAll,
//             .inputs = [](ScalarType d) { return Args{sample({3, 5}, d, -3, 3, /*seed=*/1)}; },
//             .run = [](const Args& a) { return Outputs{kiln::exp(a.t(0))}; },
//             .reference = ref_unary([](double x) { return std::exp(x); }),
//             .out_dtype = float_dtype});
//   add_golden("floor_divide", "floor_divide",
//              [](const Args& a) { return Outputs{floor_divide(a.t(0), a.t(1))}; });
//
// and, for a golden case, its records in make_conformance_golden.py. The coverage suite
// (tests/conformance/runner.cpp) fails when an operator of the registry has no case, or has a
// backward and no case with `gradient`; test_gradcheck runs every `gradient` case through
// finite-difference first and second derivative checks.
#pragma once

#include <kiln/kiln.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace conformance {

using kiln::ScalarType;
using kiln::Tensor;

// The arguments of one call: tensors, numbers (absent optionals allowed), integers, dtypes.
struct Args {
  std::vector<Tensor> tensors;
  std::vector<std::optional<kiln::Scalar>> scalars;
  std::vector<int64_t> ints;
  std::vector<ScalarType> dtypes;

  Args() = default;
  Args(std::vector<Tensor> t) : tensors(std::move(t)) {}  // NOLINT
  Args(std::initializer_list<Tensor> t) : tensors(t) {}

  const Tensor& t(size_t i) const;
  kiln::Scalar s(size_t i) const;  // throws when absent
  std::optional<kiln::Scalar> opt(size_t i) const { return scalars.at(i); }
  int64_t i(size_t k) const { return ints.at(k); }
  ScalarType d(size_t k) const { return dtypes.at(k); }
};

using Outputs = std::vector<Tensor>;
using RunFn = std::function<Outputs(const Args&)>;
using InputsFn = std::function<Args(ScalarType)>;
// Expected outputs of a call on CPU inputs of dtype `dtype` (any dtype; compared as float64).
using ReferenceFn = std::function<Outputs(const Args&, ScalarType dtype)>;
// The dtype output `index` must have when the inputs have dtype `dtype`.
using OutDtypeFn = std::function<ScalarType(ScalarType dtype, size_t index)>;

struct Case {
  std::string name{};  // unique; a Boost.Test case of that name
  std::string op{};    // the operator it exercises, for the coverage check
  // Whether the operator has a gradient: its gradients (float32 or float64) are compared on every
  // device with the CPU's, and the coverage check wants such a case for every operator with a
  // backward.
  bool gradient = false;
  // Whether test_gradcheck also checks that gradient against finite differences, in float64 on
  // the case's own inputs: false for inputs chosen to be non-differentiable (NaN, ties at an
  // extreme) or too large for a Jacobian. The operator then needs another case, or a hand-written
  // one in tests/autograd/test_gradcheck.cpp.
  bool finite_differences = true;
  std::vector<ScalarType> dtypes{};
  InputsFn inputs{};
  RunFn run{};
  ReferenceFn reference{};
  OutDtypeFn out_dtype{};
  // Widens the tolerance of 16-bit floats for composites that round more than once.
  double tolerance_scale = 1;
  // Inputs and expected outputs come from the golden file (dtypes, inputs, reference unused).
  bool golden = false;
  // Also run on transposed and strided copies of the inputs.
  bool layouts = true;
  // Applied on the device after the inputs moved there (explicit views: expand, t(), slices).
  std::function<Args(const Args&)> on_device{};
  const char* file = "";
  int line = 0;
};

// Registers a case (file and line come from the call site). The registry is built on first use.
// (The builtins behind std::source_location: clang 14 has them but not std::source_location.)
Case& add_case(Case c, const char* file = __builtin_FILE(), int line = __builtin_LINE());
// Registers a golden case: `run` applied to each record named `name` in the golden file.
Case& add_golden(std::string name, std::string op, RunFn run, const char* file = __builtin_FILE(),
                 int line = __builtin_LINE());
const std::vector<Case>& all_cases();

// Family registration functions (one per cases_*.cpp file), called by all_cases().
void register_unary_cases();
void register_unary_goldens();
// The cases registered so far (for a family that adds what the others lack).
const std::vector<Case>& all_cases_so_far();
void register_binary_cases();
void register_compare_cases();
void register_ternary_cases();
void register_inplace_cases();
void register_reduce_cases();
void register_linalg_cases();
void register_conv_cases();
void register_norm_cases();
void register_pool_cases();
void register_shape_cases();
void register_copy_cases();
void register_random_cases();
void register_rearrange_cases();
void register_scan_cases();
void register_resample_cases();
void register_attention_cases();
void register_sort_cases();    // cases_sort.cpp
void register_select_cases();  // cases_select.cpp
void register_activation_cases();

// The `gradient` argument of the family helpers (cases_*.cpp), at their call sites.
constexpr bool kGradient = true;
constexpr bool kNoGradient = false;

// --- dtype lists --------------------------------------------------------------------------------
extern const std::vector<ScalarType> kAll;       // every dtype
extern const std::vector<ScalarType> kNumeric;   // all but bool
extern const std::vector<ScalarType> kIntegral;  // uint8 .. int64
extern const std::vector<ScalarType> kSigned;    // int8 .. int64 and floats
extern const std::vector<ScalarType> kFloating;  // float16, bfloat16, float32, float64
extern const std::vector<ScalarType> kIntegralBool;

// --- output dtype rules -------------------------------------------------------------------------
ScalarType same_dtype(ScalarType d, size_t);
ScalarType bool_dtype(ScalarType, size_t);
ScalarType long_dtype(ScalarType, size_t);
// Floating dtypes stay; integers and bool give float32.
ScalarType float_dtype(ScalarType d, size_t);
// Integers and bool give int64 (sum, prod); floating dtypes stay.
ScalarType sum_dtype(ScalarType d, size_t);

// --- deterministic inputs -----------------------------------------------------------------------
// Values in [lo, hi] from a fixed generator seeded by `seed`, as a CPU tensor of `dtype`:
// integers for integral dtypes (clipped to the dtype's range), about half true for bool.
Tensor sample(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi, uint64_t seed);
// lo, lo + step, ..., hi drawn at random: repeated values, for ties and equalities.
Tensor sample_grid(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi, double step,
                   uint64_t seed);
// Values excluding (-gap, gap): divisors, log arguments of either sign.
Tensor sample_nonzero(std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi,
                      double gap, uint64_t seed);
// A CPU tensor of `dtype` with these values (row-major).
Tensor values(std::vector<int64_t> sizes, const std::vector<double>& v, ScalarType dtype);

// --- references ---------------------------------------------------------------------------------
// A tensor's values as float64 on the CPU, contiguous.
Tensor host_double(const Tensor& t);
// f applied elementwise in float64 over the broadcast of the first tensors of the arguments.
ReferenceFn ref_unary(std::function<double(double)> f);
ReferenceFn ref_binary(std::function<double(double, double)> f);
ReferenceFn ref_ternary(std::function<double(double, double, double)> f);
// A reduction of tensor 0 over dims (all when empty): f gets each group's values in row-major
// order and returns one value; `arg` makes f return an index instead (argmax).
ReferenceFn ref_reduce(std::vector<int64_t> dims, bool keepdim,
                       std::function<double(const std::vector<double>&)> f);
// The call itself, run by kiln on the CPU with the tensors at `data` converted to float64
// (shape and index operators whose float64 behaviour the golden file checks against PyTorch).
ReferenceFn ref_float64(RunFn run, std::vector<size_t> data = {0});

// Registers a case of a composite (nn::functional's layers) with a gradient: `run` on inputs
// of these sizes with values in [lo, hi] (float32 and float64), against itself in float64 on the
// CPU; test_gradcheck checks its gradient by finite differences.
void add_composite_case(const std::string& name, std::vector<std::vector<int64_t>> sizes, RunFn run,
                        double lo = -1, double hi = 1);

// Absolute and relative tolerance of a dtype (zero for integers and bool).
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance tolerance(ScalarType dtype);

// Throws a kiln::Error with `what` when cond is false (checks inside run functions).
void require(bool cond, const std::string& what);

}  // namespace conformance
