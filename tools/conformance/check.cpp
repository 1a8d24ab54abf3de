// See check.h. The layouts, the comparison and the loops over devices of the conformance suite.
#include "check.h"

#include "golden.h"

#include <cmath>
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
}  // namespace

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

namespace {

// Runs the call on each device and layout and compares with `expected`; returns the number of
// calls made.
int check_everywhere(const Case& c, const std::string& label, const Args& cpu_args,
                     const Outputs& expected, const std::vector<ScalarType>& want,
                     const std::vector<Device>& devices, const FailureSink& fail) {
  int calls = 0;
  for (const Device& device : devices) {
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
        fail(where, std::string("threw: ") + e.what());
        continue;
      }
      if (out.size() != expected.size()) {
        fail(where,
             std::to_string(out.size()) + " outputs, expected " + std::to_string(expected.size()));
        continue;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        std::string diff;
        try {
          diff = compare(out[i].to(Device(kCPU)), expected[i], want[i], c.tolerance_scale);
        } catch (const std::exception& e) {
          diff = std::string("reading the output threw: ") + e.what();
        }
        if (!diff.empty()) fail(where, "output " + std::to_string(i) + ": " + diff);
      }
    }
  }
  return calls;
}

}  // namespace

int run_reference_case(const Case& c, const std::vector<Device>& devices, const FailureSink& fail) {
  int calls = 0;
  for (ScalarType dtype : c.dtypes) {
    std::string label = dtype_name(dtype);
    Args args;
    Outputs expected;
    try {
      args = c.inputs(dtype);
      expected = c.reference(args, dtype);
    } catch (const std::exception& e) {
      fail(c.name + " [" + label + "]", std::string("the reference threw: ") + e.what());
      continue;
    }
    std::vector<ScalarType> want;
    for (size_t i = 0; i < expected.size(); ++i) {
      want.push_back(c.out_dtype ? c.out_dtype(dtype, i) : dtype);
    }
    calls += check_everywhere(c, label, args, expected, want, devices, fail);
  }
  return calls;
}

int run_golden_case(const Case& c, const std::vector<Device>& devices, const FailureSink& fail) {
  int records = 0;
  for (const GoldenRecord& r : golden_records()) {
    if (r.name != c.name) continue;
    ++records;
    std::vector<ScalarType> want;
    for (const Tensor& e : r.expected) want.push_back(e.dtype());
    check_everywhere(c, r.label, r.args, r.expected, want, devices, fail);
  }
  return records;
}

namespace {

// The gradients of sum_i (outputs[i] * weights[i]) with respect to the floating tensors of
// `args` moved to `device` (undefined where an input gets none); empty when the call fails or
// nothing is differentiable there.
std::vector<Tensor> gradients(const Case& c, const Args& cpu_args, Device device,
                              std::string& error) {
  Args a = cpu_args;
  std::vector<Tensor> leaves;
  for (Tensor& t : a.tensors) {
    t = t.to(device, t.dtype(), /*copy=*/true);
    if (is_floating_point(t.dtype())) {
      t.requires_grad_(true);
      leaves.push_back(t);
    }
  }
  if (leaves.empty()) return {};
  try {
    if (c.on_device) a = c.on_device(a);
    Outputs out = c.run(a);
    Tensor loss;
    uint64_t seed = 7;
    for (const Tensor& o : out) {
      if (!o.defined() || !o.requires_grad() || !is_floating_point(o.dtype())) continue;
      Tensor w = sample(o.sizes().vec(), o.dtype(), -1, 1, seed++).to(device);
      Tensor term = (o * w).sum();
      loss = loss.defined() ? loss + term : term;
    }
    if (!loss.defined()) return {};
    loss.backward();
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
  std::vector<Tensor> grads;
  for (const Tensor& t : leaves) grads.push_back(t.grad());
  return grads;
}

}  // namespace

bool run_gradient_case(const Case& c, Device device, const FailureSink& fail) {
  if (c.golden || !c.inputs || !c.run) return false;
  ScalarType dtype = kFloat;
  bool has_float = false;
  for (ScalarType d : c.dtypes) {
    if (d == kFloat || d == kDouble) {
      has_float = true;
      if (d == kDouble) dtype = kDouble;
    }
  }
  if (!has_float) return false;
  Args args;
  try {
    args = c.inputs(dtype);
  } catch (const std::exception&) {
    return false;  // the reference run reports it
  }
  std::string error;
  std::vector<Tensor> expected = gradients(c, args, Device(kCPU), error);
  bool any = false;
  for (const Tensor& g : expected) any = any || g.defined();
  if (!any) return false;  // not differentiable (or not on the CPU either)
  std::string where = c.name + " [gradient, " + dtype_name(dtype) + "] on " + device.str();
  std::vector<Tensor> actual = gradients(c, args, device, error);
  if (actual.size() != expected.size()) {
    fail(where, error.empty() ? "no gradient" : "backward threw: " + error);
    return true;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!expected[i].defined()) continue;
    // compared at float32's tolerance: a backward pass sums in another order than the CPU's,
    // and through every dtype the case's outputs have (casts to 16-bit floats, ...)
    std::string diff = !actual[i].defined()
                           ? "no gradient"
                           : compare(actual[i].to(Device(kCPU), kFloat), expected[i].to(kFloat),
                                     kFloat, c.tolerance_scale);
    if (!diff.empty()) fail(where, "gradient of input " + std::to_string(i) + ": " + diff);
  }
  return true;
}

}  // namespace conformance
