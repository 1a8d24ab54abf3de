// conv2d, conv2d_backward_input and conv2d_backward_weight on oneDNN (float32, bfloat16; float16
// and emulated bfloat16 widened to float32).
//
// The operands come as plain strided tensors (NCHW when contiguous). oneDNN's fast convolutions
// want blocked layouts (nChw16c, OIhw16i16o on AVX-512), so each primitive is created with
// format_tag::any and the operands are reordered into the layouts it picked and the result back.
// The forward pass asks for nChw16c activations when the channels are multiples of 16: "any"
// picks NHWC there, whose kernel and reorders measured 2.5x slower in float32 (8.7 against 21 ms
// for 64->64 3x3 on [8, 64, 56, 56], 0.4 against 0.9 ms per reorder) and no faster in bfloat16
// without AMX. With AMX it is the other way round for bfloat16: oneDNN 2.6's AMX convolution
// runs on NHWC, and forcing nChw16c picks a non-AMX kernel 40-60x slower (27-44 ms against
// 0.7 ms for 64->64 3x3 on [32, 64, 28, 28]); there "any" is left to choose.
// On that shape the plain NCHW kernels (gemm) are 2-3x slower than these, reorders included
// (KILN_CPU_CONV_PLAIN=1 forces them, for measuring). A plan (primitive,
// reorders, buffer sizes) is cached per shapes, strides, dtype and geometry, since creating one
// costs far more than running a small convolution. float64, and anything oneDNN refuses, run the
// direct loops of conv_ref.cpp.
//
// A pointwise convolution (1x1 kernel, stride 1, no padding, one group) is a matrix product per
// image: y[n] = W [O, C] @ x[n] [C, H*W]. Those run on oneDNN's matmul on the operands' own
// strides, with no reorder at all (Note [Pointwise convolutions]).
//
// oneDNN runs on its own OpenMP threads and is only called from the kernel's thread.
#include "conv.hpp"
#include "matmul.hpp"
#include "onednn.hpp"
#include "registry.hpp"
#include "widen.hpp"

#include <dnnl.hpp>

#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using sdk::kernel;

enum Pass { kForward = 0, kBackwardInput = 1, kBackwardWeight = 2 };
constexpr size_t kCacheCapacity = 64;

bool plain_layouts() {
  static const bool plain = [] {
    const char* v = std::getenv("KILN_CPU_CONV_PLAIN");
    return v != nullptr && v[0] == '1';
  }();
  return plain;
}

// Operand k of a pass: 0 and 1 are the kernel's inputs, 2 its output.
struct Plan {
  bool ok = false;  // false: oneDNN refused this key; don't ask again
  dnnl::primitive prim;
  int arg[3];
  memory::desc user[3], inner[3], bias, scratch;
  bool reorder[3] = {false, false, false};
  dnnl::reorder to_inner[2], to_user;
};

memory::data_type onednn_type(int32_t dtype) {
  switch (dtype) {
    case KILN_F32: return memory::data_type::f32;
    case KILN_BF16: return memory::data_type::bf16;
    default: return memory::data_type::undef;
  }
}

// A plain descriptor of a 4-D operand with its own strides; weights with groups > 1 are seen as
// [groups, O / groups, C / groups, kH, kW]. Size-1 dimensions get tidy strides.
memory::desc describe(const kiln_tensor& t, int64_t groups, bool is_weight) {
  memory::dims dims(t.sizes, t.sizes + 4), strides(t.strides, t.strides + 4);
  for (int d = 3; d >= 0; --d) {
    if (dims[d] == 1) strides[d] = d == 3 ? 1 : strides[d + 1] * dims[d + 1];
  }
  if (is_weight && groups > 1) {
    dims.insert(dims.begin(), groups);
    dims[1] /= groups;
    strides.insert(strides.begin(), strides[0] * dims[1]);
  }
  return memory::desc(dims, onednn_type(t.dtype), strides);
}

memory::desc any_like(const memory::desc& d) {
  return memory::desc(d.dims(), d.data_type(), memory::format_tag::any);
}

// Whether the forward pass asks for nChw16c activations (see the top of the file).
bool prefer_blocked(Pass pass, const kiln_tensor* t[4]) {
  if (t[0]->dtype == KILN_BF16 && onednn_has_amx()) return false;
  return pass == kForward && !plain_layouts() &&
         (t[0]->sizes[1] % 16 == 0 || t[0]->sizes[1] < 16) && t[2]->sizes[1] % 16 == 0;
}

// Creates the primitive of `pass` for the operands (in0, in1, out, bias or null); `blocked`:
// the forward's activations in nChw16c.
void build(Plan& p, Pass pass, const kiln_tensor* t[4], const ConvGeometry& g, bool blocked) {
  const bool plain = plain_layouts();
  // which operand is the weight: forward (x, w -> y), bwd input (gy, w -> gx), bwd weight
  // (gy, x -> gw)
  const int weight = pass == kBackwardWeight ? 2 : 1;
  for (int k = 0; k < 3; ++k) p.user[k] = describe(*t[k], g.groups, k == weight);
  memory::desc md[3];
  for (int k = 0; k < 3; ++k) md[k] = plain ? p.user[k] : any_like(p.user[k]);
  if (blocked) {
    // fewer than 16 input channels (an image's): the source stays plain, which oneDNN's blocked
    // kernels read directly
    for (int k : {0, 2}) {
      if (k == 0 && t[0]->sizes[1] < 16) {
        md[0] = p.user[0];
        continue;
      }
      md[k] = memory::desc(p.user[k].dims(), p.user[k].data_type(), memory::format_tag::aBcd16b);
    }
  }
  const memory::dims strides = {g.stride[0], g.stride[1]};
  const memory::dims dilates = {g.dilation[0] - 1, g.dilation[1] - 1};
  const memory::dims pad = {g.padding[0], g.padding[1]};
  const auto algo = dnnl::algorithm::convolution_direct;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // the forward descriptor, in the roles of its operands: src, weights, dst
  const memory::desc& src = pass == kForward ? md[0] : (pass == kBackwardInput ? md[2] : md[1]);
  const memory::desc& wei = pass == kBackwardWeight ? md[2] : md[1];
  const memory::desc& dst = pass == kForward ? md[2] : md[0];
  auto prop = pass == kForward ? dnnl::prop_kind::forward_inference
                               : dnnl::prop_kind::forward_training;
  using fwd = dnnl::convolution_forward;
  std::unique_ptr<fwd::desc> fd;
  if (pass == kForward && t[3] != nullptr) {
    p.bias = memory::desc({t[3]->sizes[0]}, onednn_type(t[3]->dtype), {t[3]->strides[0]});
    fd = std::make_unique<fwd::desc>(prop, algo, src, wei, p.bias, dst, strides, dilates, pad, pad);
  } else {
    fd = std::make_unique<fwd::desc>(prop, algo, src, wei, dst, strides, dilates, pad, pad);
  }
  fwd::primitive_desc fpd(*fd, attr, engine());
  if (pass == kForward) {
    p.prim = fwd(fpd);
    p.inner[0] = fpd.src_desc();
    p.inner[1] = fpd.weights_desc();
    p.inner[2] = fpd.dst_desc();
    p.scratch = fpd.scratchpad_desc();
    p.arg[0] = DNNL_ARG_SRC;
    p.arg[1] = DNNL_ARG_WEIGHTS;
    p.arg[2] = DNNL_ARG_DST;
  } else if (pass == kBackwardInput) {
    using bwd = dnnl::convolution_backward_data;
    bwd::primitive_desc pd(bwd::desc(algo, src, wei, dst, strides, dilates, pad, pad), attr,
                           engine(), fpd);
    p.prim = bwd(pd);
    p.inner[0] = pd.diff_dst_desc();
    p.inner[1] = pd.weights_desc();
    p.inner[2] = pd.diff_src_desc();
    p.scratch = pd.scratchpad_desc();
    p.arg[0] = DNNL_ARG_DIFF_DST;
    p.arg[1] = DNNL_ARG_WEIGHTS;
    p.arg[2] = DNNL_ARG_DIFF_SRC;
  } else {
    using bwd = dnnl::convolution_backward_weights;
    bwd::primitive_desc pd(bwd::desc(algo, src, wei, dst, strides, dilates, pad, pad), attr,
                           engine(), fpd);
    p.prim = bwd(pd);
    p.inner[0] = pd.diff_dst_desc();
    p.inner[1] = pd.src_desc();
    p.inner[2] = pd.diff_weights_desc();
    p.scratch = pd.scratchpad_desc();
    p.arg[0] = DNNL_ARG_DIFF_DST;
    p.arg[1] = DNNL_ARG_SRC;
    p.arg[2] = DNNL_ARG_DIFF_WEIGHTS;
  }
  for (int k = 0; k < 3; ++k) p.reorder[k] = p.inner[k] != p.user[k];
  for (int k = 0; k < 2; ++k) {
    if (p.reorder[k]) {
      p.to_inner[k] =
          dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p.user[k], engine(), p.inner[k]));
    }
  }
  if (p.reorder[2]) {
    p.to_user =
        dnnl::reorder(dnnl::reorder::primitive_desc(engine(), p.inner[2], engine(), p.user[2]));
  }
  p.ok = true;
}

// A thread-safe LRU of plans keyed by pass, dtype, geometry, sizes and strides.
class PlanCache {
 public:
  using Key = std::vector<int64_t>;

  std::shared_ptr<const Plan> get(Pass pass, const kiln_tensor* t[4], const ConvGeometry& g) {
    Key key = {pass,          t[2]->dtype,  plain_layouts(), g.stride[0],
               g.stride[1],   g.padding[0], g.padding[1],    g.dilation[0],
               g.dilation[1], g.groups,     t[3] != nullptr};
    for (int k = 0; k < 4 && t[k] != nullptr; ++k) {
      key.insert(key.end(), t[k]->sizes, t[k]->sizes + t[k]->ndim);
      key.insert(key.end(), t[k]->strides, t[k]->strides + t[k]->ndim);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    auto plan = std::make_shared<Plan>();
    for (bool blocked : {prefer_blocked(pass, t), false}) {
      try {
        build(*plan, pass, t, g, blocked);
        break;
      } catch (const dnnl::error&) {
        plan->ok = false;  // no kernel for this dtype or layout on this CPU
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.count(key) == 0) {
      lru_.emplace_front(key, plan);
      index_[key] = lru_.begin();
      if (lru_.size() > kCacheCapacity) {
        index_.erase(lru_.back().first);
        lru_.pop_back();
      }
    }
    return plan;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<Key, std::shared_ptr<const Plan>>> lru_;
  std::map<Key, std::list<std::pair<Key, std::shared_ptr<const Plan>>>::iterator> index_;
};

PlanCache& cache() {
  static PlanCache c;
  return c;
}

// Note [Pointwise convolutions]: a 1x1 convolution with stride 1, no padding and one group
// over NCHW is y[n] = W @ x[n] with x[n] seen as a [C, H*W] matrix: oneDNN's matmul runs that on
// the plain layout, where its convolution reorders activations to nChw16c and back (measured on
// the checkerboard's [1, 256, 128, 128] in bfloat16: about 2 ms per reorder, as much as the
// product). The backward passes are products too: gx[n] = W^T @ gy[n] and gw = sum over n of
// gy[n] @ x[n]^T, accumulated in float32 over the batch for 16-bit dtypes.

// An activation [N, C, H, W] as a batch of [C, H*W] matrices: strides {batch, row, column}, or
// false when H and W cannot be merged into one dimension.
bool as_matrices(const kiln_tensor& t, int64_t* s) {
  const int64_t h = t.sizes[2], w = t.sizes[3];
  if (h > 1 && w > 1 && t.strides[2] != w * t.strides[3]) return false;
  s[0] = t.strides[0];
  s[1] = t.strides[1];
  s[2] = w > 1 ? t.strides[3] : (h > 1 ? t.strides[2] : 1);
  return true;
}

bool pointwise(const kiln_tensor* t[4], Pass pass, const ConvGeometry& g) {
  const kiln_tensor& w = *t[pass == kBackwardWeight ? 2 : 1];
  return w.sizes[2] == 1 && w.sizes[3] == 1 && g.groups == 1 && g.stride[0] == 1 &&
         g.stride[1] == 1 && g.padding[0] == 0 && g.padding[1] == 0 && !plain_layouts();
}

// Runs a pointwise pass as matrix products; false when oneDNN refuses them.
bool run_pointwise(Pass pass, const kiln_tensor* t[4]) {
  const int32_t dtype = t[2]->dtype;
  MatmulShape s;
  if (pass == kForward || pass == kBackwardInput) {
    // forward: y[n] = W @ x[n]; backward input: gx[n] = W^T @ gy[n]
    const kiln_tensor& w = *t[1];
    const kiln_tensor& x = *t[0];
    const kiln_tensor& y = *t[2];
    if (!as_matrices(x, s.sb) || !as_matrices(y, s.sc)) return false;
    const bool transpose = pass == kBackwardInput;
    s.batch = y.sizes[0];
    s.m = y.sizes[1];
    s.k = x.sizes[1];
    s.n = y.sizes[2] * y.sizes[3];
    s.sa[0] = 0;
    s.sa[1] = transpose ? w.strides[1] : w.strides[0];
    s.sa[2] = transpose ? w.strides[0] : w.strides[1];
    MatmulEpilogue e;
    if (t[3] != nullptr) {
      e.row_bias = t[3]->data;
      e.bias_dtype = t[3]->dtype;
    }
    return onednn_matmul(s, dtype, dtype, true, w.data, x.data, y.data, e);
  }
  // backward weight: gw = sum over n of gy[n] @ x[n]^T
  const kiln_tensor& gy = *t[0];
  const kiln_tensor& x = *t[1];
  const kiln_tensor& gw = *t[2];
  int64_t sy[3], sx[3];
  if (!as_matrices(gy, sy) || !as_matrices(x, sx)) return false;
  const int64_t batch = gy.sizes[0];
  s.m = gw.sizes[0];
  s.k = gy.sizes[2] * gy.sizes[3];
  s.n = gw.sizes[1];
  s.sa[1] = sy[1];
  s.sa[2] = sy[2];
  s.sb[1] = sx[2];
  s.sb[2] = sx[1];
  s.sc[1] = gw.strides[0];
  s.sc[2] = gw.strides[1];
  // 16-bit products accumulate over the batch in a float32 buffer, rounded into gw once
  const bool wide = dtype != KILN_F32 && batch > 1;
  const int64_t gw_sizes[2] = {s.m, s.n};
  const int64_t gw_strides[2] = {gw.strides[0], gw.strides[1]};
  const kiln_tensor gw2{gw.data, dtype, 2, gw_sizes, gw_strides, {0, 0}};
  std::optional<WideTensor> sum;
  void* out = gw.data;
  if (wide) {
    sum.emplace(WideTensor::like(gw2));
    out = sum->data();
    s.sc[1] = s.n;
    s.sc[2] = 1;
  }
  const auto elem = static_cast<int64_t>(sdk::dtype_size(dtype));
  for (int64_t n = 0; n < batch; ++n) {
    MatmulEpilogue e;
    e.accumulate = n > 0;
    const char* a = static_cast<const char*>(gy.data) + n * sy[0] * elem;
    const char* b = static_cast<const char*>(x.data) + n * sx[0] * elem;
    if (!onednn_matmul(s, dtype, wide ? KILN_F32 : dtype, false, a, b, out, e)) {
      if (n == 0) return false;
      throw std::runtime_error("conv2d_backward_weight: oneDNN refused a product it ran before");
    }
  }
  if (wide) sum->round_into(gw2);
  return true;
}

// Runs `pass` on oneDNN; false when oneDNN has no primitive for it.
bool run_onednn(Pass pass, const kiln_tensor* t[4], const ConvGeometry& g) {
  if (onednn_type(t[2]->dtype) == memory::data_type::undef) return false;
  if (pointwise(t, pass, g) && run_pointwise(pass, t)) return true;
  std::shared_ptr<const Plan> p = cache().get(pass, t, g);
  if (!p->ok) return false;
  thread_local dnnl::stream stream(engine());
  thread_local AlignedScratch buffers[4];  // three operands in the primitive's layouts, scratchpad
  std::unordered_map<int, memory> args;
  memory inner[3];
  for (int k = 0; k < 3; ++k) {
    memory user(p->user[k], engine(), t[k]->data);
    if (!p->reorder[k]) {
      inner[k] = user;
      continue;
    }
    inner[k] = memory(p->inner[k], engine(), buffers[k].get(p->inner[k].get_size()));
    if (k < 2) p->to_inner[k].execute(stream, user, inner[k]);
  }
  for (int k = 0; k < 3; ++k) args.emplace(p->arg[k], inner[k]);
  if (t[3] != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->bias, engine(), t[3]->data));
  if (size_t bytes = p->scratch.get_size(); bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(p->scratch, engine(), buffers[3].get(bytes)));
  }
  p->prim.execute(stream, args);
  if (p->reorder[2]) {
    memory user(p->user[2], engine(), t[2]->data);
    p->to_user.execute(stream, inner[2], user);
  }
  stream.wait();
  return true;
}

// Runs `pass` on oneDNN, 16-bit operands widened to float32 where oneDNN has no kernel for their
// dtype (float16) or only emulates the instructions (bfloat16 on AVX-512 without AVX512-BF16:
// 29 ms against 10.4 in float32 for 64->64 3x3 on [8, 64, 56, 56], measured with
// ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI). False when oneDNN refuses the float32 pass too.
bool run_onednn_any(Pass pass, const kiln_tensor* t[4], const ConvGeometry& g) {
  const int32_t dtype = t[2]->dtype;
  const bool widen = dtype == KILN_F16 || (dtype == KILN_BF16 && onednn_emulates_bf16());
  if (!widen) return run_onednn(pass, t, g);
  WideTensor in0 = WideTensor::copy_of(*t[0]), in1 = WideTensor::copy_of(*t[1]);
  WideTensor out = WideTensor::like(*t[2]);
  std::optional<WideTensor> bias;
  if (t[3] != nullptr) bias.emplace(WideTensor::copy_of(*t[3]));
  const kiln_tensor* wide[4] = {&in0.tensor(), &in1.tensor(), &out.tensor(),
                                bias ? &bias->tensor() : nullptr};
  if (!run_onednn(pass, wide, g)) return false;
  out.round_into(*t[2]);
  return true;
}

void check_rank(const Call& call) {
  for (int32_t i = 0; i < call.num_inputs(); ++i) {
    const int32_t want = i == 2 ? 1 : 4;  // the bias is 1-D
    if (call.input(i).ndim != want) {
      throw std::invalid_argument(std::string(call.op()) + ": input " + std::to_string(i) +
                                  " has " + std::to_string(call.input(i).ndim) + " dimensions");
    }
  }
  if (call.output(0).ndim != 4) {
    throw std::invalid_argument(std::string(call.op()) + ": the output must be 4-D");
  }
}

void conv2d_kernel(const Call& call) {
  check_rank(call);
  ConvGeometry g = conv_geometry(call);
  const kiln_tensor* bias = call.num_inputs() > 2 ? &call.input(2) : nullptr;
  const kiln_tensor* t[4] = {&call.input(0), &call.input(1), &call.output(0), bias};
  if (run_onednn_any(kForward, t, g)) return;
  conv2d_ref(*t[0], *t[1], bias, *t[2], g);
}

void conv2d_backward_input_kernel(const Call& call) {
  check_rank(call);
  ConvGeometry g = conv_geometry(call);
  const kiln_tensor* t[4] = {&call.input(0), &call.input(1), &call.output(0), nullptr};
  if (run_onednn_any(kBackwardInput, t, g)) return;
  conv2d_backward_input_ref(*t[0], *t[1], *t[2], g);
}

void conv2d_backward_weight_kernel(const Call& call) {
  check_rank(call);
  ConvGeometry g = conv_geometry(call);
  const kiln_tensor* t[4] = {&call.input(0), &call.input(1), &call.output(0), nullptr};
  if (run_onednn_any(kBackwardWeight, t, g)) return;
  conv2d_backward_weight_ref(*t[0], *t[1], *t[2], g);
}

}  // namespace

void register_conv(KernelTable& table) {
  table.add("conv2d", kernel<conv2d_kernel>);
  table.add("conv2d_backward_input", kernel<conv2d_backward_input_kernel>);
  table.add("conv2d_backward_weight", kernel<conv2d_backward_weight_kernel>);
}

}  // namespace kiln::cpu
