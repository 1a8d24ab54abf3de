// Padding and resampling: constant_pad_nd and F::pad in its four modes, F::interpolate in its
// seven modes, upsample_nearest2d and upsample_bilinear2d (the optional primitives
// upsample_nearest and upsample_bilinear2d), pixel_shuffle and pixel_unshuffle. Values against
// PyTorch's (golden records of make_conformance_golden.py's write_resample); gradients, marked
// `gradient`, against finite differences (test_gradcheck) on inputs of each family.
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;
namespace F = kiln::nn::functional;

// The golden records' mode numbers: F::pad's and F::interpolate's modes in their variants' order.
F::PadFuncOptions::mode_t pad_mode(int64_t i) {
  switch (i) {
    case 1: return kReflect;
    case 2: return kReplicate;
    case 3: return kCircular;
    default: return kConstant;
  }
}

F::InterpolateFuncOptions::mode_t interpolate_mode(int64_t i) {
  switch (i) {
    case 1: return kLinear;
    case 2: return kBilinear;
    case 3: return kBicubic;
    case 4: return kTrilinear;
    case 5: return kArea;
    case 6: return kNearestExact;
    default: return kNearest;
  }
}

// ints: mode, align_corners (-1: not given), recompute_scale_factor (-1: not given).
F::InterpolateFuncOptions interpolate_options(const Args& a) {
  F::InterpolateFuncOptions o;
  o.mode(interpolate_mode(a.i(0)));
  if (a.i(1) >= 0) o.align_corners(a.i(1) == 1);
  if (a.i(2) >= 0) o.recompute_scale_factor(a.i(2) == 1);
  return o;
}

std::vector<int64_t> ints_from(const Args& a, size_t from) {
  return {a.ints.begin() + static_cast<std::ptrdiff_t>(from), a.ints.end()};
}

}  // namespace

void register_resample_cases() {
  // ints: the pad list; scalar: the value
  add_golden("constant_pad_nd", "constant_pad_nd",
             [](const Args& a) { return Outputs{constant_pad_nd(a.t(0), a.ints, a.s(0))}; });
  // ints: mode, then the pad list
  add_golden("pad", "pad", [](const Args& a) {
    return Outputs{F::pad(a.t(0), F::PadFuncOptions(ints_from(a, 1)).mode(pad_mode(a.i(0))))};
  });
  // ints: mode, align_corners, recompute_scale_factor, then the sizes; or scalars: the factors
  add_golden("interpolate", "interpolate", [](const Args& a) {
    F::InterpolateFuncOptions o = interpolate_options(a);
    if (a.scalars.empty()) {
      o.size(ints_from(a, 3));
    } else {
      std::vector<double> factors;
      for (size_t i = 0; i < a.scalars.size(); ++i) factors.push_back(a.s(i).to_double());
      o.scale_factor(factors);
    }
    return Outputs{F::interpolate(a.t(0), o)};
  });
  add_golden("pixel_shuffle", "pixel_shuffle",
             [](const Args& a) { return Outputs{pixel_shuffle(a.t(0), a.i(0))}; });
  add_golden("pixel_unshuffle", "pixel_unshuffle",
             [](const Args& a) { return Outputs{pixel_unshuffle(a.t(0), a.i(0))}; });

  // the primitives' gradients (the index_add adjoint), by finite differences in test_gradcheck
  auto nearest = [](const Args& a) {
    return Outputs{upsample_nearest2d(a.t(0), {7, 5}), upsample_nearest2d(a.t(0), {6, 2}, 2.0),
                   F::interpolate(a.t(0), F::InterpolateFuncOptions()
                                              .size(std::vector<int64_t>{5, 7})
                                              .mode(kNearestExact))};
  };
  add_case({.name = "upsample_nearest",
            .op = "upsample_nearest",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 3, 4}, d, -2, 2, 61)};
                },
            .run = nearest,
            .reference = ref_float64(nearest)});
  auto bilinear = [](const Args& a) {
    return Outputs{upsample_bilinear2d(a.t(0), {7, 5}, false),
                   upsample_bilinear2d(a.t(0), {5, 9}, true),
                   upsample_bilinear2d(a.t(0), {4, 6}, false, 1.5, 1.5)};
  };
  add_case({.name = "upsample_bilinear2d",
            .op = "upsample_bilinear2d",
            .gradient = true,
            .dtypes = kFloating,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3, 3, 4}, d, -2, 2, 62)};
                },
            .run = bilinear,
            .reference = ref_float64(bilinear),
            .tolerance_scale = 4});

  // the composites' gradients
  add_composite_case("pad_modes", {{2, 3, 4, 5}}, [](const Args& a) {
    const Tensor& x = a.t(0);
    return Outputs{F::pad(x, F::PadFuncOptions({2, 1, 1, 3}).mode(kReflect)),
                   F::pad(x, F::PadFuncOptions({-1, 3, 2, 0}).mode(kReplicate)),
                   F::pad(x, F::PadFuncOptions({1, 4, 2, 1}).mode(kCircular)),
                   F::pad(x, F::PadFuncOptions({1, -2, 0, 2, 1, 1}).value(0.5))};
  });
  add_composite_case("interpolate_modes", {{1, 2, 3, 4}}, [](const Args& a) {
    const Tensor& x = a.t(0);
    auto o = [] { return F::InterpolateFuncOptions().size(std::vector<int64_t>{5, 6}); };
    return Outputs{F::interpolate(x, o().mode(kBicubic).align_corners(false)),
                   F::interpolate(x, o().mode(kArea)),
                   F::interpolate(x.flatten(2), F::InterpolateFuncOptions()
                                                    .scale_factor(std::vector<double>{1.7})
                                                    .mode(kLinear)
                                                    .align_corners(true)),
                   F::interpolate(x.unsqueeze(2), F::InterpolateFuncOptions()
                                                      .size(std::vector<int64_t>{2, 4, 3})
                                                      .mode(kTrilinear)
                                                      .align_corners(false))};
  });
  add_composite_case("pixel_shuffle", {{2, 8, 3, 2}}, [](const Args& a) {
    return Outputs{pixel_shuffle(a.t(0), 2), pixel_unshuffle(a.t(0).reshape({2, 2, 6, 4}), 2)};
  });
}

}  // namespace conformance
