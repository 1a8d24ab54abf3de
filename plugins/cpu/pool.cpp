// avg_pool2d and avg_pool2d_backward, the optional pooling primitives (docs/primitives.md), on
// oneDNN's pooling primitive over contiguous NCHW operands in float32 and bfloat16. The right
// padding is what makes oneDNN's output size PyTorch's (ceil_mode adds to it); the core calls
// these only where oneDNN's divisor is PyTorch's (Note [Pooling as a gather of windows] has the
// composite the other cases run).
#include "loops.hpp"
#include "onednn.hpp"
#include "registry.hpp"

#include <stdexcept>
#include <string>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using sdk::kernel;

struct PoolGeometry {
  memory::dims kernel, stride, pad_l, pad_r;
  dnnl::algorithm algo;
};

// Reads kernel, stride and padding (two values each) and include_pad; `in` and `out` are the
// input and output [N, C, H, W].
PoolGeometry pool_geometry(const sdk::Call& call, const kiln_tensor& in, const kiln_tensor& out) {
  if (in.ndim != 4 || out.ndim != 4) {
    throw std::invalid_argument(std::string(call.op()) + ": expected 4-D operands");
  }
  PoolGeometry g;
  for (int32_t a = 0; a < 3; ++a) {
    int32_t n = 0;
    const int64_t* v = call.attr_list(a, &n);
    if (n != 2) throw std::invalid_argument(std::string(call.op()) + ": expected 2 values");
    memory::dims& dst = a == 0 ? g.kernel : (a == 1 ? g.stride : g.pad_l);
    dst = {v[0], v[1]};
  }
  g.algo = call.attr_i64(3) != 0 ? dnnl::algorithm::pooling_avg_include_padding
                                 : dnnl::algorithm::pooling_avg_exclude_padding;
  for (int d = 0; d < 2; ++d) {
    g.pad_r.push_back((out.sizes[2 + d] - 1) * g.stride[d] + g.kernel[d] - in.sizes[2 + d] -
                      g.pad_l[d]);
  }
  return g;
}

memory::desc nchw(const kiln_tensor& t) {
  memory::data_type type = t.dtype == KILN_F32    ? memory::data_type::f32
                           : t.dtype == KILN_BF16 ? memory::data_type::bf16
                                                  : memory::data_type::undef;
  if (type == memory::data_type::undef) throw_unsupported(t.dtype);
  return memory::desc({t.sizes[0], t.sizes[1], t.sizes[2], t.sizes[3]}, type,
                      memory::format_tag::nchw);
}

// Runs the forward (x -> y) or the backward (gy -> gx) pass.
void run_pool(bool backward, const kiln_tensor& x, const kiln_tensor& y, const PoolGeometry& g) {
  const memory::desc xd = nchw(x), yd = nchw(y);
  dnnl::pooling_forward::primitive_desc fpd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, g.algo, xd, yd, g.stride,
                                  g.kernel, g.pad_l, g.pad_r),
      engine());
  thread_local dnnl::stream stream(engine());
  memory xm(xd, engine(), x.data), ym(yd, engine(), y.data);
  if (!backward) {
    dnnl::pooling_forward(fpd).execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
  } else {
    dnnl::pooling_backward::primitive_desc bpd(
        dnnl::pooling_backward::desc(g.algo, xd, yd, g.stride, g.kernel, g.pad_l, g.pad_r),
        engine(), fpd);
    dnnl::pooling_backward(bpd).execute(stream, {{DNNL_ARG_DIFF_DST, ym}, {DNNL_ARG_DIFF_SRC, xm}});
  }
  stream.wait();
}

void avg_pool2d_kernel(const sdk::Call& call) {
  const kiln_tensor& x = call.input(0);
  const kiln_tensor& y = call.output(0);
  run_pool(false, x, y, pool_geometry(call, x, y));
}

void avg_pool2d_backward_kernel(const sdk::Call& call) {
  const kiln_tensor& gy = call.input(0);
  const kiln_tensor& gx = call.output(0);
  run_pool(true, gx, gy, pool_geometry(call, gx, gy));
}

}  // namespace

void register_pool(KernelTable& table) {
  table.add("avg_pool2d", kernel<avg_pool2d_kernel>);
  table.add("avg_pool2d_backward", kernel<avg_pool2d_backward_kernel>);
}

}  // namespace kiln::cpu
