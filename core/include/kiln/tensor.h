// kiln::Tensor — the model in a few paragraphs.
//
// A tensor is a strided view of a Storage: sizes, strides (in elements), an offset, a dtype and
// the device of its storage. Views (view, transpose, narrow, select, expand, indexing with
// slices, ...) make new tensors that share the storage; writing through a view writes the base.
// `Tensor` is a cheap handle (a shared pointer): copying it aliases the same tensor, as in
// libtorch. Use `clone()` for a copy of the data.
//
// Every operation on tensors is an operator (kiln/dispatch.h). An operator enters core, passes
// the dispatch layers (autocast, then autograd) that are active for the call, and reaches the
// backend: a view or composite written in core, or a kernel of the plugin that provides the
// tensors' device. Nothing here knows any device; "cpu" is a plugin like any other.
//
// Names and argument orders follow libtorch, in namespace kiln:
//
//   auto x = kiln::randn({3, 5});
//   auto y = kiln::randn({5, 4});
//   auto z = x.matmul(y);                      // or kiln::matmul(x, y)
//   auto s = kiln::sum(x + 1, /*dim=*/0);
//   float v = s[0].item<float>();
//   auto r = x.index({kiln::indexing::Slice(0, 2), 1});
#pragma once

#include <kiln/array_ref.h>
#include <kiln/device.h>
#include <kiln/dtype.h>
#include <kiln/error.h>
#include <kiln/export.h>
#include <kiln/options.h>
#include <kiln/scalar.h>
#include <kiln/storage.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kiln {

class Tensor;
class TensorIndex;
class DispatchKeySet;  // kiln/dispatch.h
using TensorList = ArrayRef<Tensor>;

namespace autograd {
struct AutogradMeta;  // kiln/autograd.h
class Node;
}  // namespace autograd

// The state behind a Tensor handle. Fields are public for core code; user code goes through
// Tensor's methods.
struct KILN_API TensorImpl {
  std::shared_ptr<Storage> storage;
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;  // in elements
  int64_t numel = 1;
  ScalarType dtype = kFloat;
  Device device = Device(kCPU);
  bool requires_grad = false;
  // A 0-dim tensor made from a C++ number (`x + 2`): it takes part in type promotion like
  // PyTorch's wrapped numbers, after dimensioned and 0-dim tensors.
  bool wrapped_number = false;
  // Created under InferenceMode: may not be saved for backward.
  bool inference = false;
  // Made by a view operator (view, transpose, slicing, expand, ...; not detach), as PyTorch's
  // is_view(): the autocast weight cache skips views.
  bool view = false;
  std::shared_ptr<autograd::AutogradMeta> autograd;

  void* data() const {
    return static_cast<char*>(storage->data()) + offset * static_cast<int64_t>(element_size(dtype));
  }
  bool is_contiguous() const;
};

class KILN_API Tensor {
 public:
  // An undefined tensor (defined() is false), as libtorch's default-constructed Tensor.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;

  // Assigning to a named tensor rebinds the handle; assigning to a temporary (`x[0] = y`,
  // `x.index({Slice(), 1}) = 0`) writes into it, so through a view into its base, as libtorch's:
  // copy_ for a tensor, fill_ for a number. Advanced indexing gives a copy: use index_put_.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& src) &&;
  Tensor& operator=(Tensor&& src) &&;
  Tensor& operator=(const Scalar& value) &&;

  // --- properties -------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  IntArrayRef sizes() const { return impl().sizes; }
  IntArrayRef strides() const { return impl().strides; }
  // Size of `dim` (negative counts from the end).
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl().numel; }
  ScalarType dtype() const { return impl().dtype; }
  ScalarType scalar_type() const { return impl().dtype; }
  Device device() const { return impl().device; }
  TensorOptions options() const;
  int64_t storage_offset() const { return impl().offset; }
  size_t element_size() const { return kiln::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const { return impl().is_contiguous(); }
  bool is_floating_point() const { return kiln::is_floating_point(dtype()); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  // Whether both tensors view the same storage.
  bool is_same_storage(const Tensor& other) const { return storage() == other.storage(); }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  bool requires_grad() const { return impl().requires_grad; }
  // Made in InferenceMode (or a view of such a tensor): read-only outside it, never saved for
  // backward.
  bool is_inference() const { return impl().inference; }
  const Tensor& set_requires_grad(bool requires_grad) const;
  const Tensor& requires_grad_(bool requires_grad = true) const;
  // Always kStrided: kiln has no sparse or other layouts.
  Layout layout() const { return kStrided; }
  // The dispatch keys the dispatcher sees on this tensor (see kiln/dispatch.h).
  DispatchKeySet key_set() const;

  // --- autograd (kiln/autograd.h) -----------------------------------------------------------
  // The accumulated gradient of a leaf (or of a non-leaf after retain_grad()); undefined if none.
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  void set_grad(const Tensor& grad);
  // Gradient of this tensor with respect to the graph leaves, accumulated into their grad().
  // `gradient` may be omitted for a one-element tensor. With `inputs`, only their grad() is
  // accumulated (leaves or not), as torch::autograd::backward's.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, std::optional<TensorList> inputs = std::nullopt) const;
  // A tensor sharing this one's data, outside the graph (requires_grad false).
  Tensor detach() const;
  const Tensor& detach_() const;
  // libtorch's Tensor::data(): this tensor's data outside the graph, as a leaf that does not
  // require grad and is not a view (PyTorch's variable_data()). Unlike PyTorch, it shares the
  // version counter (kiln keeps it on the storage), so changing it in place is still caught by
  // a backward that saved this tensor.
  Tensor data() const;
  // libtorch's other names for data(). Both share the version counter, which kiln keeps on the
  // storage (libtorch's variable_data() starts a new one).
  Tensor variable_data() const { return data(); }
  Tensor tensor_data() const { return data(); }
  // Makes this tensor use new_data's storage, sizes, strides and dtype, keeping its autograd
  // identity (requires_grad, grad, hooks), as libtorch's set_data. Both must be on the same
  // device type.
  void set_data(const Tensor& new_data) const;
  // Keeps grad() for this non-leaf tensor after backward.
  void retain_grad() const;
  bool retains_grad() const;
  bool is_leaf() const;
  // The node that created this tensor (null for leaves and tensors outside the graph).
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  uint32_t output_nr() const;
  // Calls hook with this tensor's gradient during backward; a defined result replaces it.
  // Returns the hook's index.
  unsigned register_hook(std::function<Tensor(const Tensor&)> hook) const;
  // A hook that returns nothing only observes the gradient.
  template <class Hook>
    requires std::is_void_v<std::invoke_result_t<Hook&, const Tensor&>>
  unsigned register_hook(Hook hook) const {
    return register_hook(
        std::function<Tensor(const Tensor&)>([hook = std::move(hook)](const Tensor& grad) mutable {
          hook(grad);
          return Tensor();
        }));
  }
  // Disables the hook register_hook returned `pos` for (the others keep their indices); raises
  // kiln::IndexError for an index no hook of this tensor has.
  void remove_hook(unsigned pos) const;
  // The storage's version counter (bumped by every in-place change).
  uint32_t _version() const { return impl().storage->version(); }

  // Pointer to the first element; T must match the dtype. Device memory is only readable on
  // host-accessible devices (the CPU).
  template <class T>
  T* data_ptr() const;
  void* data_ptr() const { return impl().data(); }

  // The value of a one-element tensor, converted to T.
  template <class T>
  T item() const;
  Scalar item() const;

  // --- conversions and copies ---------------------------------------------------------------
  Tensor to(Device device, bool copy = false) const;
  Tensor to(ScalarType dtype, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool copy = false) const;
  Tensor to(const Tensor& other) const { return to(other.device(), other.dtype()); }
  Tensor cpu() const { return to(Device(kCPU)); }
  Tensor clone() const;
  Tensor contiguous() const;
  // Copies src into this tensor (broadcasting src, converting dtype, across devices).
  const Tensor& copy_(const Tensor& src) const;
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const { return fill_(0); }

  // --- views (share storage) ----------------------------------------------------------------
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> offset = std::nullopt) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  // x[i]: select(0, i); x[idx] with an integer or bool tensor: index({idx}).
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor operator[](const Tensor& index) const;
  // x.index({Slice(0, 2), 1, None, Ellipsis, idx}) as libtorch's (kiln/indexing.h): integers,
  // slices, None and Ellipsis give views; int64 and bool tensors index as PyTorch's advanced
  // indexing and give a copy.
  Tensor index(ArrayRef<TensorIndex> indices) const;
  Tensor index(std::initializer_list<TensorIndex> indices) const;
  // x.index_put_({Slice(), idx}, value): writes value (broadcast) where the indices point;
  // accumulate adds instead, repeated indices adding up (kiln/indexing.h).
  const Tensor& index_put_(ArrayRef<TensorIndex> indices, const Tensor& value,
                           bool accumulate = false) const;
  const Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value,
                           bool accumulate = false) const;
  const Tensor& index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const;
  const Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) const;

  // --- math (see kiln/ops.h for each operator's contract) ------------------------------------
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor max(const Tensor& other) const { return maximum(other); }
  Tensor min(const Tensor& other) const { return minimum(other); }
  Tensor neg() const;
  Tensor abs() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor sign() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor square() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_not() const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;
  // issue 15's activations and pointwise math, as libtorch's methods (kiln/ops.h)
  Tensor atan2(const Tensor& other) const;
  const Tensor& atan2_(const Tensor& other) const;
  Tensor hypot(const Tensor& other) const;
  const Tensor& hypot_(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor copysign(const Tensor& other) const;
  Tensor copysign(const Scalar& other) const;
  const Tensor& copysign_(const Tensor& other) const;
  const Tensor& copysign_(const Scalar& other) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor xlogy(const Scalar& other) const;
  const Tensor& xlogy_(const Tensor& other) const;
  const Tensor& xlogy_(const Scalar& other) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  const Tensor& lerp_(const Tensor& end, const Tensor& weight) const;
  const Tensor& lerp_(const Tensor& end, const Scalar& weight) const;
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  const Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2,
                         const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  const Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2,
                         const Scalar& value = 1) const;
  Tensor nan_to_num(std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;
  const Tensor& nan_to_num_(std::optional<double> nan = 0.0,
                            std::optional<double> posinf = std::nullopt,
                            std::optional<double> neginf = std::nullopt) const;
  Tensor sgn() const;
  Tensor deg2rad() const;
  Tensor rad2deg() const;
  // In place, as PyTorch's: sgn_ keeps the dtype (bool and integers too); deg2rad_ and rad2deg_
  // need a floating self (PyTorch's "result type Float can't be cast" otherwise).
  const Tensor& sgn_() const;
  const Tensor& deg2rad_() const;
  const Tensor& rad2deg_() const;
  Tensor prelu(const Tensor& weight) const;
  Tensor hardshrink(double lambd = 0.5) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = {}) const;

  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor var(IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const Scalar& p, IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;

  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

  // Issue 15: sorting and selection (kiln/ops.h has each contract).
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1,
                                  bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  Tensor msort() const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  // Issue 15: selection, diagonals and products (kiln/ops.h has each contract).
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor take(const Tensor& index) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  Tensor count_nonzero(IntArrayRef dims) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor trace() const;
  Tensor dot(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1,
              const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                 const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                const Scalar& alpha = 1) const;
  Tensor bincount(const Tensor& weights = {}, int64_t minlength = 0) const;
  Tensor histc(int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0) const;

  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;

  // --- in place -----------------------------------------------------------------------------
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& mul_(const Scalar& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& div_(const Scalar& other) const;
  const Tensor& pow_(const Scalar& exponent) const;
  const Tensor& neg_() const;
  const Tensor& abs_() const;
  const Tensor& exp_() const;
  const Tensor& log_() const;
  const Tensor& sqrt_() const;
  const Tensor& relu_() const;
  const Tensor& sigmoid_() const;
  const Tensor& tanh_() const;
  const Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  const Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  // Fills with values drawn uniformly from [from, to) / normally with mean and std, from the
  // default generator. Like every in-place fill, the old value gets a zero gradient (PyTorch's
  // UniformBackward0); initializers run them under NoGradGuard.
  const Tensor& uniform_(double from = 0, double to = 1) const;
  const Tensor& normal_(double mean = 0, double std = 1) const;
  // Integers uniform in [from, to) (as doubles for floating tensors); without `to`, up to the
  // largest integer the dtype holds exactly, inclusive (2^24 for float32, 2^53 for float64, the
  // maximum for integers), as PyTorch's.
  const Tensor& random_(int64_t from, std::optional<int64_t> to) const;
  // Integers uniform in [0, to).
  const Tensor& random_(int64_t to) const { return random_(0, to); }
  // Integers uniform in [0, the largest integer the dtype holds exactly].
  const Tensor& random_() const { return random_(0, std::nullopt); }
  // Changes the sizes to `sizes` (contiguous strides), keeping the storage when it is large
  // enough and growing it (old elements kept) otherwise; new elements are uninitialized. As
  // PyTorch's, refused for a tensor that requires grad while grad mode is on, and for storage
  // the tensor does not own (from_blob) when it must grow.
  const Tensor& resize_(IntArrayRef sizes) const;

  // "tensor([[1., 2.],\n        [3., 4.]])", exactly as PyTorch prints it.
  std::string str() const;

  TensorImpl& impl() const;  // throws for an undefined tensor
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

KILN_API std::ostream& operator<<(std::ostream& out, const Tensor& t);

// --- C++ operators ---------------------------------------------------------------------------
KILN_API Tensor operator-(const Tensor& a);
KILN_API Tensor operator~(const Tensor& a);
KILN_API Tensor operator+(const Tensor& a, const Tensor& b);
KILN_API Tensor operator-(const Tensor& a, const Tensor& b);
KILN_API Tensor operator*(const Tensor& a, const Tensor& b);
KILN_API Tensor operator/(const Tensor& a, const Tensor& b);
KILN_API Tensor operator%(const Tensor& a, const Tensor& b);
KILN_API Tensor operator&(const Tensor& a, const Tensor& b);
KILN_API Tensor operator|(const Tensor& a, const Tensor& b);
KILN_API Tensor operator^(const Tensor& a, const Tensor& b);
KILN_API Tensor operator==(const Tensor& a, const Tensor& b);
KILN_API Tensor operator!=(const Tensor& a, const Tensor& b);
KILN_API Tensor operator<(const Tensor& a, const Tensor& b);
KILN_API Tensor operator<=(const Tensor& a, const Tensor& b);
KILN_API Tensor operator>(const Tensor& a, const Tensor& b);
KILN_API Tensor operator>=(const Tensor& a, const Tensor& b);
KILN_API Tensor operator+(const Tensor& a, const Scalar& b);
KILN_API Tensor operator-(const Tensor& a, const Scalar& b);
KILN_API Tensor operator*(const Tensor& a, const Scalar& b);
KILN_API Tensor operator/(const Tensor& a, const Scalar& b);
KILN_API Tensor operator%(const Tensor& a, const Scalar& b);
KILN_API Tensor operator+(const Scalar& a, const Tensor& b);
KILN_API Tensor operator-(const Scalar& a, const Tensor& b);
KILN_API Tensor operator*(const Scalar& a, const Tensor& b);
KILN_API Tensor operator/(const Scalar& a, const Tensor& b);
KILN_API Tensor operator==(const Tensor& a, const Scalar& b);
KILN_API Tensor operator!=(const Tensor& a, const Scalar& b);
KILN_API Tensor operator<(const Tensor& a, const Scalar& b);
KILN_API Tensor operator<=(const Tensor& a, const Scalar& b);
KILN_API Tensor operator>(const Tensor& a, const Scalar& b);
KILN_API Tensor operator>=(const Tensor& a, const Scalar& b);
KILN_API Tensor& operator+=(Tensor& a, const Tensor& b);
KILN_API Tensor& operator-=(Tensor& a, const Tensor& b);
KILN_API Tensor& operator*=(Tensor& a, const Tensor& b);
KILN_API Tensor& operator/=(Tensor& a, const Tensor& b);
KILN_API Tensor& operator+=(Tensor& a, const Scalar& b);
KILN_API Tensor& operator-=(Tensor& a, const Scalar& b);
KILN_API Tensor& operator*=(Tensor& a, const Scalar& b);
KILN_API Tensor& operator/=(Tensor& a, const Scalar& b);
// Rvalue forms, so `x[i] += y` writes through the view like libtorch.
KILN_API Tensor& operator+=(Tensor&& a, const Tensor& b);
KILN_API Tensor& operator-=(Tensor&& a, const Tensor& b);
KILN_API Tensor& operator*=(Tensor&& a, const Tensor& b);
KILN_API Tensor& operator/=(Tensor&& a, const Tensor& b);

// --- template definitions --------------------------------------------------------------------
namespace detail {
[[noreturn]] KILN_API void throw_undefined_tensor();
[[noreturn]] KILN_API void throw_data_ptr_mismatch(const Tensor& t, ScalarType requested);
KILN_API Scalar item_scalar(const Tensor& t);
}  // namespace detail

inline TensorImpl& Tensor::impl() const {
  if (impl_ == nullptr) [[unlikely]]
    detail::throw_undefined_tensor();
  return *impl_;
}

template <class T>
T* Tensor::data_ptr() const {
  if (scalar_type_of<T>() != dtype()) detail::throw_data_ptr_mismatch(*this, scalar_type_of<T>());
  return static_cast<T*>(impl().data());
}

template <class T>
T Tensor::item() const {
  return detail::item_scalar(*this).to<T>();
}

}  // namespace kiln
