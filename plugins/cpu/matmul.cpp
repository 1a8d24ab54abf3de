// mm and bmm. float32, bfloat16 and float16 go to oneDNN's matmul (the output in the inputs'
// dtype, accumulation in float32 inside oneDNN), described with the operands' own strides when
// oneDNN takes them and packed contiguous otherwise. Primitives are cached by shape, strides and
// dtype, because creating one costs far more than running a small product. Where oneDNN has no
// kernel for a 16-bit dtype on this CPU, or only a slow emulation of bfloat16 instructions the
// CPU lacks, the operands are widened to float32 for it; float64, the integers, tiny products
// and anything oneDNN refuses run gemm_loop.
//
// oneDNN runs on its own OpenMP threads and is only ever called from the kernel's thread, never
// from inside a TBB task (the two runtimes would oversubscribe the cores).
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
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::cpu {
namespace {

using dnnl::memory;
using sdk::kernel;

constexpr int64_t kSmallProduct = 8192;  // m * n * k below which gemm_loop beats a oneDNN call
constexpr size_t kCacheCapacity = 64;

struct Primitive {
  bool ok = false;  // false: oneDNN refused this key; don't ask again
  dnnl::matmul prim;
  memory::desc a, b, c, bias, scratch;
};

// A small thread-safe LRU of primitives keyed by (dtype, dims, strides).
class PrimitiveCache {
 public:
  using Key = std::vector<int64_t>;

  std::shared_ptr<const Primitive> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  void insert(const Key& key, std::shared_ptr<const Primitive> value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.count(key) != 0) return;
    lru_.emplace_front(key, std::move(value));
    index_[key] = lru_.begin();
    if (lru_.size() > kCacheCapacity) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<Key, std::shared_ptr<const Primitive>>> lru_;
  std::map<Key, std::list<std::pair<Key, std::shared_ptr<const Primitive>>>::iterator> index_;
};

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

memory::data_type onednn_type(int32_t dtype) {
  switch (dtype) {
    case KILN_F32: return memory::data_type::f32;
    case KILN_BF16: return memory::data_type::bf16;
    case KILN_F16: return memory::data_type::f16;
    default: return memory::data_type::undef;
  }
}

// Strides of size-1 dimensions are arbitrary in kiln; oneDNN recognises plain layouts only when
// they look like a row-major or a column-major matrix, so give them such values.
void tidy_strides(int64_t rows, int64_t cols, int64_t* s) {
  if (cols == 1) s[2] = 1;
  if (rows == 1) s[1] = s[2] == 1 ? cols : 1;
  int64_t extent = std::max<int64_t>((rows - 1) * s[1] + (cols - 1) * s[2] + 1, 1);
  if (s[0] == 0) s[0] = extent;
}

memory::desc describe(int32_t dtype, bool batched, int64_t batch, int64_t rows, int64_t cols,
                      const int64_t* s) {
  if (!batched) return memory::desc({rows, cols}, onednn_type(dtype), {s[1], s[2]});
  return memory::desc({batch, rows, cols}, onednn_type(dtype), {s[0], s[1], s[2]});
}

// The cached primitive for s (strides already tidied), or one with ok == false.
std::shared_ptr<const Primitive> get_primitive(const MatmulShape& s, int32_t dtype,
                                               int32_t out_dtype, bool batched, int64_t batch_a,
                                               int64_t batch_b, const MatmulEpilogue& e) {
  const int64_t bias = e.row_bias != nullptr ? e.bias_dtype : -1;
  PrimitiveCache::Key key = {dtype, out_dtype, batched, batch_a, batch_b,     s.batch,
                             s.m,   s.k,       s.n,     bias,    e.accumulate};
  key.insert(key.end(), s.sa, s.sa + 3);
  key.insert(key.end(), s.sb, s.sb + 3);
  key.insert(key.end(), s.sc, s.sc + 3);
  if (auto hit = cache().find(key)) return hit;
  auto p = std::make_shared<Primitive>();
  try {
    p->a = describe(dtype, batched, batch_a, s.m, s.k, s.sa);
    p->b = describe(dtype, batched, batch_b, s.k, s.n, s.sb);
    p->c = describe(out_dtype, batched, s.batch, s.m, s.n, s.sc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;
    if (e.accumulate) ops.append_sum(1.0f);
    if (e.row_bias != nullptr) {
      // a per-row bias as a binary post-op: oneDNN's own bias argument broadcasts along
      // columns only, and a bias along rows sends it to its reference loops
      const int64_t rs[3] = {s.m, 1, 1};
      p->bias = describe(e.bias_dtype, batched, 1, s.m, 1, rs);
      ops.append_binary(dnnl::algorithm::binary_add, p->bias);
    }
    attr.set_post_ops(ops);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, p->b, p->c), attr, engine());
    // the reference implementation is orders of magnitude slower than packing the operands
    // (seconds for a 1 GFLOP product): treat it as a refusal
    p->ok = std::string_view(pd.impl_info_str()).substr(0, 3) != "ref";
    if (p->ok) {
      p->prim = dnnl::matmul(pd);
      p->scratch = pd.scratchpad_desc();
    }
  } catch (const dnnl::error&) {
    p->ok = false;  // unsupported dtype on this CPU, or strides it does not take
  }
  cache().insert(key, p);
  return p;
}

}  // namespace

bool onednn_matmul(MatmulShape s, int32_t dtype, int32_t out_dtype, bool batched, const void* a,
                   const void* b, void* out, const MatmulEpilogue& epilogue) {
  if (onednn_type(dtype) == memory::data_type::undef ||
      onednn_type(out_dtype) == memory::data_type::undef) {
    return false;
  }
  const int64_t batch_a = s.sa[0] == 0 ? 1 : s.batch, batch_b = s.sb[0] == 0 ? 1 : s.batch;
  tidy_strides(s.m, s.k, s.sa);
  tidy_strides(s.k, s.n, s.sb);
  tidy_strides(s.m, s.n, s.sc);
  auto p = get_primitive(s, dtype, out_dtype, batched, batch_a, batch_b, epilogue);
  if (!p->ok) return false;
  thread_local dnnl::stream stream(engine());
  thread_local AlignedScratch scratch;
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, memory(p->a, engine(), const_cast<void*>(a))},
      {DNNL_ARG_WEIGHTS, memory(p->b, engine(), const_cast<void*>(b))},
      {DNNL_ARG_DST, memory(p->c, engine(), out)}};
  if (epilogue.row_bias != nullptr) {
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(epilogue.accumulate ? 1 : 0) | DNNL_ARG_SRC_1,
                 memory(p->bias, engine(), const_cast<void*>(epilogue.row_bias)));
  }
  if (size_t bytes = p->scratch.get_size(); bytes > 0) {
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(p->scratch, engine(), scratch.get(bytes)));
  }
  p->prim.execute(stream, args);
  stream.wait();
  return true;
}

namespace {

// 16-bit operands widened to float32 for oneDNN, the result rounded back once.
bool onednn_widened(const MatmulShape& s, int32_t dtype, bool batched, const void* a, const void* b,
                    void* out) {
  const int64_t size_a[3] = {s.sa[0] == 0 ? 1 : s.batch, s.m, s.k};
  const int64_t size_b[3] = {s.sb[0] == 0 ? 1 : s.batch, s.k, s.n};
  const int64_t size_c[3] = {s.batch, s.m, s.n};
  const kiln_tensor ta{const_cast<void*>(a), dtype, 3, size_a, s.sa, {0, 0}};
  const kiln_tensor tb{const_cast<void*>(b), dtype, 3, size_b, s.sb, {0, 0}};
  const kiln_tensor tc{out, dtype, 3, size_c, s.sc, {0, 0}};
  WideTensor wa = WideTensor::copy_of(ta), wb = WideTensor::copy_of(tb);
  WideTensor wc = WideTensor::like(tc);
  MatmulShape f = s;
  const int64_t ca[3] = {s.sa[0] == 0 ? 0 : s.m * s.k, s.k, 1};
  const int64_t cb[3] = {s.sb[0] == 0 ? 0 : s.k * s.n, s.n, 1};
  const int64_t cc[3] = {s.m * s.n, s.n, 1};
  std::copy(ca, ca + 3, f.sa);
  std::copy(cb, cb + 3, f.sb);
  std::copy(cc, cc + 3, f.sc);
  if (!onednn_matmul(f, KILN_F32, KILN_F32, batched, wa.data(), wb.data(), wc.data())) {
    return false;
  }
  wc.round_into(tc);
  return true;
}

void matmul(const Call& call, bool batched) {
  const kiln_tensor& a = call.input(0);
  const kiln_tensor& b = call.input(1);
  const kiln_tensor& out = call.output(0);
  const int32_t rank = batched ? 3 : 2;
  const int32_t o = batched ? 1 : 0;  // first matrix dimension
  if (a.ndim != rank || b.ndim != rank || out.ndim != rank || a.sizes[o + 1] != b.sizes[o] ||
      out.sizes[o] != a.sizes[o] || out.sizes[o + 1] != b.sizes[o + 1] ||
      (batched && (a.sizes[0] != out.sizes[0] || b.sizes[0] != out.sizes[0]))) {
    throw std::invalid_argument(std::string(call.op()) + ": shapes do not match: a has " +
                                std::to_string(a.ndim) + " dimensions, b " +
                                std::to_string(b.ndim) + ", out " + std::to_string(out.ndim));
  }
  if (a.dtype != out.dtype || b.dtype != out.dtype) {
    throw std::invalid_argument(std::string("operands have dtypes ") + sdk::dtype_name(a.dtype) +
                                ", " + sdk::dtype_name(b.dtype) + " and " +
                                sdk::dtype_name(out.dtype));
  }
  MatmulShape s;
  s.batch = batched ? out.sizes[0] : 1;
  s.m = a.sizes[o];
  s.k = a.sizes[o + 1];
  s.n = b.sizes[o + 1];
  for (int32_t d = 0; d < 2; ++d) {
    s.sa[d + 1] = a.strides[o + d];
    s.sb[d + 1] = b.strides[o + d];
    s.sc[d + 1] = out.strides[o + d];
  }
  if (batched) {
    s.sa[0] = s.batch == 1 ? 0 : a.strides[0];
    s.sb[0] = s.batch == 1 ? 0 : b.strides[0];
    s.sc[0] = out.strides[0];
  }
  if (s.batch == 0 || s.m == 0 || s.n == 0) return;
  const int32_t dtype = out.dtype;
  if (s.k == 0) {
    visit<Dtypes::numeric>(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      map<T>([] { return compute_t<T>(0); }, out, {});
    });
    return;
  }
  if (onednn_type(dtype) != memory::data_type::undef && s.m * s.n * s.k > kSmallProduct) {
    // bfloat16 on AVX-512 without bfloat16 instructions: oneDNN's emulation is slower than
    // widening (onednn.hpp)
    bool emulated = dtype == KILN_BF16 && onednn_emulates_bf16();
    if (!emulated && onednn_matmul(s, dtype, dtype, batched, a.data, b.data, out.data)) return;
    // no kernel for the dtype on this CPU, or strides oneDNN refuses: contiguous float32 copies
    if (onednn_widened(s, dtype, batched, a.data, b.data, out.data)) return;
  }
  gemm_loop(s, dtype, a.data, b.data, out.data);
}

void mm_kernel(const Call& call) { matmul(call, false); }
void bmm_kernel(const Call& call) { matmul(call, true); }

}  // namespace

void register_matmul(KernelTable& table) {
  table.add("mm", kernel<mm_kernel>);
  table.add("bmm", kernel<bmm_kernel>);
}

}  // namespace kiln::cpu
