// F::affine_grid and F::grid_sample, after ATen's AffineGridGenerator.cpp and GridSampler.h:
// the same coordinate formulas (unnormalisation, clipping, reflection) and weights, written as
// gathers so that autograd differentiates the input, the grid and theta.
#include <kiln/dispatch.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/functional/vision.h>
#include <kiln/warning.h>

#include <vector>

namespace kiln::nn::functional {
namespace {

constexpr int64_t kBilinearMode = 0, kNearestMode = 1;
constexpr int64_t kZerosPadding = 0, kBorderPadding = 1, kReflectionPadding = 2;

// ATen's linspace_from_neg_one: num_steps points spanning [-1, 1] (align_corners) or the
// centres of num_steps equal cells of it.
Tensor linspace_from_neg_one(int64_t num_steps, bool align_corners, const TensorOptions& options) {
  if (num_steps <= 1) return zeros({1}, options);
  Tensor range = linspace(-1, 1, num_steps, options);
  if (!align_corners) range = range * static_cast<double>(num_steps - 1) / num_steps;
  return range;
}

// ATen's reflect_coordinates: in reflected into [twice_low / 2, twice_high / 2].
Tensor reflect_coordinates(const Tensor& in, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(in);
  double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  Tensor distance = abs(in - min);
  Tensor extra = fmod(distance, span);
  Tensor flips = floor(distance / span);
  return where(eq(remainder(flips, 2), 0), extra + min, span - extra + min);
}

// ATen's grid_sampler_compute_source_index: normalised coordinates in [-1, 1] to pixel
// coordinates of a dimension of `size`, clipped or reflected as the padding mode says.
Tensor source_index(const Tensor& coord, int64_t size, int64_t padding, bool align_corners) {
  Tensor x = align_corners ? (coord + 1) / 2 * static_cast<double>(size - 1)
                           : ((coord + 1) * static_cast<double>(size) - 1) / 2;
  if (padding == kReflectionPadding) {
    x = align_corners ? reflect_coordinates(x, 0, 2 * (size - 1))
                      : reflect_coordinates(x, -1, 2 * size - 1);
  }
  if (padding != kZerosPadding) x = clamp(x, 0.0, static_cast<double>(size - 1));
  return x;
}

void check_grid_sampler(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding) {
  KILN_CHECK_VALUE(input.defined() && grid.defined(), "grid_sampler(): expected defined input ",
                   "and grid");
  KILN_CHECK_VALUE(input.device() == grid.device(), "grid_sampler(): expected input and grid to ",
                   "be on same device, but input is on ", input.device(), " and grid is on ",
                   grid.device());
  KILN_CHECK_TYPE(input.dtype() == grid.dtype(), "grid_sampler(): expected input and grid to ",
                  "have same dtype, but input has ", dtype_name(input.dtype()), " and grid has ",
                  dtype_name(grid.dtype()));
  KILN_CHECK_TYPE(input.is_floating_point(), "grid_sampler(): expected a floating point input, ",
                  "but got ", dtype_name(input.dtype()));
  KILN_CHECK_VALUE((input.dim() == 4 || input.dim() == 5) && input.dim() == grid.dim(),
                   "grid_sampler(): expected 4D or 5D input and grid with same number of ",
                   "dimensions, but got input with sizes ", input.sizes(), " and grid with sizes ",
                   grid.sizes());
  KILN_CHECK_VALUE(input.size(0) == grid.size(0), "grid_sampler(): expected grid and input to ",
                   "have same batch size, but got input with sizes ", input.sizes(),
                   " and grid with sizes ", grid.sizes());
  KILN_CHECK_VALUE(grid.size(-1) == input.dim() - 2, "grid_sampler(): expected grid to have size ",
                   input.dim() - 2, " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t d = 2; d < input.dim(); ++d) {
    KILN_CHECK_VALUE(input.size(d) > 0, "grid_sampler(): expected input to have non-empty ",
                     "spatial dimensions, but input has sizes ", input.sizes(), " with dimension ",
                     d, " being empty");
  }
  KILN_CHECK_VALUE(mode == kBilinearMode || mode == kNearestMode, "grid_sampler(): ",
                   "interpolation_mode must be 0 (bilinear) or 1 (nearest), but got ", mode);
  KILN_CHECK_VALUE(
      padding == kZerosPadding || padding == kBorderPadding || padding == kReflectionPadding,
      "grid_sampler(): ", "padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), but got ",
      padding);
}

using GridSamplerOp = Operator<Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool)>;

// The input's values at the integer points `at` (one [N, P] tensor per spatial dim), 0 where a
// point is outside the input: [N, C, P].
Tensor read_points(const Tensor& flat_input, IntArrayRef spatial, const std::vector<Tensor>& at,
                   Tensor& inside) {
  Tensor linear;
  int64_t stride = 1;
  for (size_t d = spatial.size(); d-- > 0;) {
    Tensor c = at[d];
    Tensor in_range = logical_and(ge(c, 0), le(c, static_cast<double>(spatial[d] - 1)));
    inside = inside.defined() ? logical_and(inside, in_range) : in_range;
    Tensor part = clamp(c, 0.0, static_cast<double>(spatial[d] - 1)).to(kLong) * stride;
    linear = linear.defined() ? linear + part : part;
    stride *= spatial[d];
  }
  int64_t n = flat_input.size(0), channels = flat_input.size(1), points = linear.size(1);
  return gather(flat_input, 2, linear.unsqueeze(1).expand({n, channels, points}));
}

Tensor grid_sampler_composite(const GridSamplerOp&, const Tensor& input, const Tensor& grid,
                              int64_t mode, int64_t padding, bool align_corners) {
  check_grid_sampler(input, grid, mode, padding);
  const int64_t n = input.size(0), channels = input.size(1), nd = input.dim() - 2;
  IntArrayRef spatial = input.sizes().slice(2);
  DimVector out_sizes{n, channels};
  for (int64_t d = 1; d <= nd; ++d) out_sizes.push_back(grid.size(d));
  Tensor flat_input = input.reshape({n, channels, -1});
  Tensor points = grid.reshape({n, -1, nd});
  // coordinate of spatial dim d (D, H, W order) is grid's component nd - 1 - d (x is W's)
  std::vector<Tensor> coords;
  for (int64_t d = 0; d < nd; ++d) {
    coords.push_back(source_index(points.select(2, nd - 1 - d), spatial[static_cast<size_t>(d)],
                                  padding, align_corners));
  }
  if (mode == kNearestMode) {
    std::vector<Tensor> nearest;
    for (const Tensor& c : coords) nearest.push_back(round(c.detach()));
    Tensor inside;
    Tensor values = read_points(flat_input, spatial, nearest, inside);
    Tensor out = where(inside.unsqueeze(1), values, zeros_like(values));
    // the grid's gradient is zero here, as PyTorch's (defined: the grid was used); a masked-out
    // where() adds exactly 0 even for a non-finite grid
    Tensor never = zeros({1, 1, 1}, TensorOptions().dtype(kBool).device(input.device()));
    return (out + where(never, coords[0].unsqueeze(1), 0.0)).view(out_sizes);
  }
  std::vector<Tensor> lower;
  for (const Tensor& c : coords) lower.push_back(floor(c.detach()));
  Tensor out;
  for (int64_t corner = 0; corner < (int64_t{1} << nd); ++corner) {
    std::vector<Tensor> at;
    Tensor weight;
    for (int64_t d = 0; d < nd; ++d) {
      const Tensor& c = coords[static_cast<size_t>(d)];
      const Tensor& low = lower[static_cast<size_t>(d)];
      bool upper = (corner >> d) & 1;
      at.push_back(upper ? low + 1 : low);
      Tensor w = upper ? c - low : low + 1 - c;
      weight = weight.defined() ? weight * w : w;
    }
    Tensor inside;
    Tensor values = read_points(flat_input, spatial, at, inside);
    Tensor term = where(inside.unsqueeze(1), values * weight.unsqueeze(1), zeros_like(values));
    out = out.defined() ? out + term : term;
  }
  return out.view(out_sizes);
}
GridSamplerOp grid_sampler_op("grid_sampler",
                              "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, "
                              "int padding_mode, bool align_corners) -> Tensor",
                              grid_sampler_composite, /*primitive=*/false);

}  // namespace

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  KILN_CHECK_TYPE(theta.is_floating_point(), "affine_grid: Expected theta to have floating point ",
                  "type, but got ", dtype_name(theta.dtype()));
  if (size.size() == 4) {
    KILN_CHECK_VALUE(theta.dim() == 3 && theta.size(-2) == 2 && theta.size(-1) == 3,
                     "affine_grid: Expected a batch of 2D affine matrices of shape Nx2x3 for size ",
                     size, ". Got ", theta.sizes(), ".");
  } else if (size.size() == 5) {
    KILN_CHECK_VALUE(theta.dim() == 3 && theta.size(-2) == 3 && theta.size(-1) == 4,
                     "affine_grid: Expected a batch of 3D affine matrices of shape Nx3x4 for size ",
                     size, ". Got ", theta.sizes(), ".");
  } else {
    KILN_CHECK_VALUE(false, "affine_grid: affine_grid only supports 4D and 5D sizes, for 2D and ",
                     "3D affine transforms, respectively. Got size ", size);
  }
  for (int64_t s : size) {
    KILN_CHECK_VALUE(s > 0, "affine_grid: Expected non-zero, positive output size. Got ", size);
  }
  KILN_CHECK_VALUE(theta.size(0) == size[0], "affine_grid: theta's batch of ", theta.size(0),
                   " does not match size ", size, " (expected ", size[0], ")");
  if (align_corners && size[size.size() - 1] == 1 && size[size.size() - 2] == 1) {
    KILN_WARN_ONCE("affine_grid: Since version 1.3.0, affine_grid behavior has changed for unit-",
                   "size grids when align_corners=True. This is not an intended use case of ",
                   "affine_grid. See the documentation of affine_grid for details.");
  }
  return affine_grid_generator(theta, size, align_corners);
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  bool align_corners = false;
  if (options.align_corners()) {
    align_corners = *options.align_corners();
  } else {
    KILN_WARN_ONCE("grid_sample: Default grid_sample and affine_grid behavior has changed to ",
                   "align_corners=False since 1.3.0. Please specify align_corners=True if the old ",
                   "behavior is desired. See the documentation of grid_sample for details.");
  }
  int64_t mode = std::holds_alternative<enumtype::kNearest>(options.mode()) ? kNearestMode
                                                                            : kBilinearMode;
  int64_t padding = static_cast<int64_t>(options.padding_mode().index());
  return grid_sampler(input, grid, mode, padding, align_corners);
}

}  // namespace kiln::nn::functional

namespace kiln {

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  using nn::functional::linspace_from_neg_one;
  TensorOptions options = TensorOptions().dtype(theta.dtype()).device(theta.device());
  const int64_t n = size[0], nd = static_cast<int64_t>(size.size()) - 2;
  // the base grid [..., nd + 1] of (x, y[, z], 1): x along the last dim, then y, then z
  DimVector spatial(size.slice(2));
  std::vector<Tensor> components;
  for (int64_t k = 0; k < nd; ++k) {
    int64_t dim = nd - 1 - k;  // x is the last spatial dim
    DimVector shape(static_cast<size_t>(nd), 1);
    shape[static_cast<size_t>(dim)] = spatial[static_cast<size_t>(dim)];
    Tensor line = linspace_from_neg_one(spatial[static_cast<size_t>(dim)], align_corners, options);
    components.push_back(line.reshape(shape).expand(spatial));
  }
  components.push_back(ones(spatial, options));
  Tensor base = stack(components, -1).reshape({1, -1, nd + 1});
  DimVector out_sizes{n};
  for (int64_t s : spatial) out_sizes.push_back(s);
  out_sizes.push_back(nd);
  return matmul(base, theta.transpose(1, 2)).view(out_sizes);
}

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                    int64_t padding_mode, bool align_corners) {
  return nn::functional::grid_sampler_op(input, grid, interpolation_mode, padding_mode,
                                         align_corners);
}

}  // namespace kiln
