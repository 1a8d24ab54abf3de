// fused_pointwise: a pointwise program (kiln/sdk/pointwise_program.hpp) evaluated in blocks of
// kBlock elements: each block loads the inputs into registers (contiguous runs converted in
// bulk, a broadcast operand filled, other strides gathered), runs each step over the block as
// one vectorized loop (the AVX-512 copy where the CPU has it, as the unfused loops), rounds the
// step to its dtype, and stores the outputs; blocks run on TBB's threads. Each step is the
// functor its unfused operator's kernel uses (vecmath's exp, tanh, erf for float, as unary.cpp),
// so a fused chain gives the bits of the unfused one.
#include "loops.hpp"
#include "registry.hpp"
#include "vecmath.hpp"

#include <kiln/sdk/pointwise_program.hpp>

#include <memory>
#include <stdexcept>
#include <vector>

namespace kiln::cpu {
namespace {

namespace pg = sdk::program;
namespace pw = sdk::pointwise;
using sdk::kernel;

constexpr int64_t kBlock = 2048;  // elements per register: a few registers stay in L2

// vecmath's float formulas, as unary.cpp registers them for exp, tanh, sigmoid, silu, erf,
// expm1 and gelu (the other ops and double use the sdk functors).
struct VmExp {
  [[gnu::always_inline]] float operator()(float a, float, float) const { return vm::exp(a); }
};
struct VmExpm1 {
  [[gnu::always_inline]] float operator()(float a, float, float) const { return vm::expm1(a); }
};
struct VmTanh {
  [[gnu::always_inline]] float operator()(float a, float, float) const { return vm::tanh(a); }
};
struct VmErf {
  [[gnu::always_inline]] float operator()(float a, float, float) const { return vm::erf(a); }
};
struct VmSigmoid {
  [[gnu::always_inline]] float operator()(float x, float, float) const {
    return 1.0f / (1.0f + vm::exp(-x));
  }
};
struct VmSilu {
  [[gnu::always_inline]] float operator()(float x, float, float) const {
    return x / (1.0f + vm::exp(-x));
  }
};
struct VmGeluTanh {
  [[gnu::always_inline]] float operator()(float x, float, float) const {
    const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + vm::tanh(inner));
  }
};
struct VmGeluErf {
  [[gnu::always_inline]] float operator()(float x, float, float) const {
    return x * 0.5f * (1.0f + vm::erf(x * 0.7071067811865476f));
  }
};

template <class C, class F>
bool visit_cpu_step(int32_t op, F&& f) {
  if constexpr (std::is_same_v<C, float>) {
    switch (op) {
      case pg::EXP: f(VmExp{}); return true;
      case pg::EXPM1: f(VmExpm1{}); return true;
      case pg::TANH: f(VmTanh{}); return true;
      case pg::ERF: f(VmErf{}); return true;
      case pg::SIGMOID: f(VmSigmoid{}); return true;
      case pg::SILU: f(VmSilu{}); return true;
      case pg::GELU: f(VmGeluErf{}); return true;
      case pg::GELU_TANH: f(VmGeluTanh{}); return true;
      default: break;
    }
  }
  return pg::visit_step<C>(op, f);
}

// Elements [begin, begin + n) of t (in row-major order of its sizes) into dst as C.
template <class C>
void load(const kiln_tensor& t, const sdk::StridedLoop<1>& loop, int64_t begin, int64_t n, C* dst) {
  sdk::visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using CT = compute_t<T>;
    C* out = dst;
    loop.run(begin, begin + n, [&](char** p, const int64_t* step, int64_t m) {
      if constexpr (std::is_same_v<CT, C>) {
        load_chunk<T>(p[0], step[0], m, out);
      } else {
        for (int64_t i = 0; i < m; ++i) {
          out[i] = static_cast<C>(static_cast<CT>(*reinterpret_cast<const T*>(p[0] + i * step[0])));
        }
      }
      out += m;
    });
  });
}

// src (already rounded to t's dtype) into elements [begin, begin + n) of t.
template <class C>
void store(const kiln_tensor& t, const sdk::StridedLoop<1>& loop, int64_t begin, int64_t n,
           const C* src) {
  sdk::visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const C* in = src;
    loop.run(begin, begin + n, [&](char** p, const int64_t* step, int64_t m) {
      if (step[0] == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(p[0]);
        if constexpr (std::is_same_v<T, Half> && std::is_same_v<C, float>) {
          float_to_half(in, out, m);
        } else if constexpr (std::is_same_v<T, BFloat16> && std::is_same_v<C, float>) {
          float_to_bfloat16(in, out, m);
        } else if constexpr (std::is_same_v<T, bool>) {
          for (int64_t i = 0; i < m; ++i) out[i] = in[i] != C(0);
        } else {
          for (int64_t i = 0; i < m; ++i) out[i] = static_cast<T>(static_cast<compute_t<T>>(in[i]));
        }
      } else {
        for (int64_t i = 0; i < m; ++i) {
          T* out = reinterpret_cast<T*>(p[0] + i * step[0]);
          if constexpr (std::is_same_v<T, bool>) {
            *out = in[i] != C(0);
          } else {
            *out = static_cast<T>(static_cast<compute_t<T>>(in[i]));
          }
        }
      }
      in += m;
    });
  });
}

// Rounds n values of a register to dtype (see pg::narrow), in bulk.
template <class C>
void round_to(int32_t dtype, C* r, int64_t n, Half* half_scratch) {
  if constexpr (std::is_same_v<C, float>) {
    if (dtype == KILN_F16) {
      float_to_half(r, half_scratch, n);
      half_to_float(half_scratch, r, n);
      return;
    }
    if (dtype == KILN_BF16) {
      auto* b = reinterpret_cast<BFloat16*>(half_scratch);
      float_to_bfloat16(r, b, n);
      bfloat16_to_float(b, r, n);
      return;
    }
  }
  if (dtype == KILN_BOOL) {
    for (int64_t i = 0; i < n; ++i) r[i] = r[i] != C(0) ? C(1) : C(0);
    return;
  }
  if constexpr (!std::is_floating_point_v<C>) {
    switch (dtype) {
      case KILN_U8:
      case KILN_I8:
      case KILN_I16:
      case KILN_I32:
        for (int64_t i = 0; i < n; ++i) r[i] = pg::narrow<C>(dtype, r[i]);
        return;
      default: return;
    }
  }
}

template <class C>
void run_program(const Call& call, const pg::Program& p) {
  const kiln_tensor& first = call.output(0);
  const int64_t numel = sdk::numel(first);
  if (numel == 0) return;
  const int64_t n_in = p.n_inputs, n_reg = p.n_registers();
  std::vector<sdk::StridedLoop<1>> in_loops, out_loops;
  for (int64_t i = 0; i < n_in; ++i) {
    const kiln_tensor* t = &call.input(static_cast<int32_t>(i));
    in_loops.emplace_back(sdk::StridedLoop<1>({t}));
  }
  for (int64_t i = 0; i < p.n_outputs; ++i) {
    const kiln_tensor* t = &call.output(static_cast<int32_t>(i));
    out_loops.emplace_back(sdk::StridedLoop<1>({t}));
  }
  std::vector<C> constants(static_cast<size_t>(p.n_constants));
  for (int64_t k = 0; k < p.n_constants; ++k) constants[k] = pg::constant<C>(p, k);
  // the registers each step writes are narrowed to its dtype once; a constant register is filled
  // once per range (its value is the same in every block)
  parallel_for(numel, 4 * kBlock, [&](int64_t begin, int64_t end) {
    const int64_t block = std::min(kBlock, end - begin);
    std::unique_ptr<C[]> regs(new C[static_cast<size_t>(n_reg * block)]);
    std::unique_ptr<Half[]> scratch(new Half[static_cast<size_t>(block)]);
    auto reg = [&](int64_t r) { return regs.get() + r * block; };
    for (int64_t k = 0; k < p.n_steps; ++k) {
      const int64_t* s = p.steps + k * pg::kStepFields;
      if (s[0] != pg::CONST) continue;
      const C v = pg::narrow<C>(static_cast<int32_t>(s[1]), constants[s[2]]);
      C* d = reg(n_in + k);
      for (int64_t i = 0; i < block; ++i) d[i] = v;
    }
    for (int64_t pos = begin; pos < end; pos += block) {
      const int64_t n = std::min(block, end - pos);
      for (int64_t i = 0; i < n_in; ++i) {
        load<C>(call.input(static_cast<int32_t>(i)), in_loops[i], pos, n, reg(i));
      }
      for (int64_t k = 0; k < p.n_steps; ++k) {
        const int64_t* s = p.steps + k * pg::kStepFields;
        const auto op = static_cast<int32_t>(s[0]);
        if (op == pg::CONST) continue;
        const int ar = pg::arity(op);
        C* d = reg(n_in + k);
        const C* a = reg(s[2]);
        const C* b = ar > 1 ? reg(s[3]) : a;
        const C* c = ar > 2 ? reg(s[4]) : a;
        const bool known = visit_cpu_step<C>(op, [&](auto f) {
          detail::map_contiguous<C, C, C, C>(f, n, d, a, b, c);
        });
        if (!known) {
          throw std::logic_error(std::string("fused_pointwise: op ") + pg::op_name(op) +
                                 " has no kernel for this compute type");
        }
        round_to<C>(static_cast<int32_t>(s[1]), d, n, scratch.get());
      }
      for (int64_t o = 0; o < p.n_outputs; ++o) {
        store<C>(call.output(static_cast<int32_t>(o)), out_loops[o], pos, n, reg(p.outputs[o]));
      }
    }
  });
}

void fused_pointwise_kernel(const Call& call) {
  const pg::Program p = pg::read(call);
  switch (p.compute) {
    case KILN_F32: run_program<float>(call, p); break;
    case KILN_F64: run_program<double>(call, p); break;
    default: run_program<int64_t>(call, p); break;
  }
}

}  // namespace

void register_fused_pointwise(KernelTable& table) {
  table.add("fused_pointwise", kernel<fused_pointwise_kernel>);
}

}  // namespace kiln::cpu
