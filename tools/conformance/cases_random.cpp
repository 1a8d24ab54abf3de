// Random operators (uniform_, normal_, random_): values depend only on the seed, the offset and
// the element's index (Note [Random numbers are a function of (seed, offset, index)] in
// kiln/sdk/philox.hpp), so every device must give the CPU's numbers for the same seed. Each case
// also checks the range of what it drew.
#include "conformance.h"

#include <cmath>

namespace conformance {
namespace {

using namespace kiln;

// The same draws on the CPU (the reference): `draw` on a CPU tensor like the input.
ReferenceFn same_on_cpu(RunFn draw) {
  return [draw](const Args& a, ScalarType) { return draw(a); };
}

Outputs uniform_draw(const Args& a) {
  manual_seed(11);
  Tensor r = rand_like(a.t(0));
  Tensor s = rand(a.t(0).sizes(), a.t(0).options());
  Tensor all = cat({r.flatten(), s.flatten()}).to(kDouble);
  require((all >= 0).all().item<bool>() && (all < 1).all().item<bool>(), "rand outside [0, 1)");
  return {r, s};
}

Outputs normal_draw(const Args& a) {
  manual_seed(12);
  Tensor r = randn_like(a.t(0));
  Tensor d = r.to(kDouble);
  double mean = d.mean().item<double>(), std = d.std().item<double>();
  require(std::abs(mean) < 0.1 && std::abs(std - 1) < 0.1, "randn's sample mean " +
                                                               std::to_string(mean) + " or std " +
                                                               std::to_string(std) + " is off");
  return {r};
}

Outputs integer_draw(const Args& a) {
  manual_seed(13);
  int64_t low = a.t(0).dtype() == kByte ? 0 : -3;
  Tensor r = randint_like(a.t(0), low, 5);
  Tensor d = r.to(kDouble);
  require((d >= low).all().item<bool>() && (d < 5).all().item<bool>(), "randint outside [low, 5)");
  return {r};
}

}  // namespace

void register_random_cases() {
  add_case({.name = "uniform_",
            .op = "uniform_",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{zeros({40, 30}, TensorOptions().dtype(d))};
                },
            .run = uniform_draw,
            .reference = same_on_cpu(uniform_draw),
            .layouts = false});
  add_case({.name = "normal_",
            .op = "normal_",
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{zeros({40, 50}, TensorOptions().dtype(d))};
                },
            .run = normal_draw,
            .reference = same_on_cpu(normal_draw),
            .layouts = false});
  add_case({.name = "random_",
            .op = "random_",
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{zeros({30, 20}, TensorOptions().dtype(d))};
                },
            .run = integer_draw,
            .reference = same_on_cpu(integer_draw),
            .layouts = false});
}

}  // namespace conformance
