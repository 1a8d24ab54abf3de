// copy_ and fill_ (primitives), and the conversions built on them: to, clone, contiguous.
#include "elementwise.h"

#include "../autograd/inplace.h"

#include "../runtime.h"

#include <cstring>
#include <vector>

namespace kiln {
namespace detail {
namespace {

using CopyOp = Operator<Tensor(const Tensor&, const Tensor&)>;
using FillOp = Operator<Tensor(const Tensor&, const Scalar&)>;

bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.is_same_storage(b) || a.numel() == 0 || b.numel() == 0) return false;
  auto span = [](const Tensor& t) {
    int64_t lo = t.storage_offset(), hi = lo;
    for (int64_t d = 0; d < t.dim(); ++d) hi += (t.sizes()[d] - 1) * t.strides()[d];
    return std::pair<int64_t, int64_t>(lo, hi);
  };
  auto [alo, ahi] = span(a);
  auto [blo, bhi] = span(b);
  return alo <= bhi && blo <= ahi;
}

// Note [Copies between devices]: a copy between two devices goes through host memory with the
// devices' copy operations (kiln_device_ops::copy). The dtype conversion happens on whichever
// side has a copy_ kernel for it, the source first.
void copy_across_devices(const Tensor& dst, const Tensor& src) {
  Tensor s = src;
  bool convert_on_source = src.dtype() != dst.dtype() && copy_op_has_kernel(src.device());
  if (convert_on_source) s = s.to(dst.dtype());
  s = s.expand(dst.sizes());
  std::vector<unsigned char> host = host_bytes(s);
  Tensor target = dst;
  if (s.dtype() != dst.dtype()) target = empty_tensor(dst.sizes(), s.dtype(), dst.device());
  DeviceTypeRecord& r = require_device(target.device(), "copy_");
  DimVector strides = contiguous_strides(target.sizes());
  kiln_tensor from{host.data(),
                   static_cast<int32_t>(s.dtype()),
                   static_cast<int32_t>(s.dim()),
                   s.sizes().data(),
                   strides.data(),
                   {KILN_DEVICE_HOST, 0}};
  kiln_tensor to = describe(target);
  if (r.ops->copy(r.self, &to, &from) != 0) {
    throw Error(str("copy_ from ", src.device().str(), " to ", dst.device().str(), ": ",
                    take_plugin_error()));
  }
  if (!target.is_same(dst)) const_cast<Tensor&>(dst).copy_(target);
}

Tensor copy_backend(const CopyOp& op, const Tensor& self, const Tensor& src) {
  KILN_CHECK_VALUE(broadcast_dims(self.sizes(), src.sizes()).vec() == self.sizes().vec(), op.name(),
                   ": the source of shape ", src.sizes(),
                   " cannot be broadcast to the destination's shape ", self.sizes());
  check_no_internal_overlap(op.name(), self);
  if (self.numel() == 0) return self;
  if (self.device() == src.device()) {
    Tensor s = src;
    if (overlaps(self, src) &&
        !(self.is_same_storage(src) && self.strides().equals(src.strides()) &&
          self.storage_offset() == src.storage_offset())) {
      s = src.clone();  // partial overlap: read everything before writing
    }
    Tensor expanded = s.sizes().equals(self.sizes()) ? s : s.expand(self.sizes());
    run_kernel(op, {&expanded}, {&self});
  } else {
    copy_across_devices(self, src);
  }
  bump_version(self);
  return self;
}

Tensor fill_backend(const FillOp& op, const Tensor& self, const Scalar& value) {
  check_no_internal_overlap(op.name(), self);
  if (self.numel() == 0) return self;
  run_kernel(op, {}, {&self}, Attrs().scalar("value", value));
  bump_version(self);
  return self;
}

}  // namespace

CopyOp copy_op("copy_", "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)", copy_backend);
FillOp fill_op("fill_", "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", fill_backend);

bool copy_op_has_kernel(Device device) { return copy_op.has_plugin_kernel(device.type()); }

}  // namespace detail

const Tensor& Tensor::copy_(const Tensor& src) const {
  detail::copy_op(*this, src);
  return *this;
}

const Tensor& Tensor::fill_(const Scalar& value) const {
  detail::fill_op(*this, value);
  return *this;
}

Tensor Tensor::clone() const {
  Tensor out = detail::empty_tensor(sizes(), dtype(), device());
  out.copy_(*this);
  out.storage()->reset_version();
  return out;
}

Tensor clone(const Tensor& x) { return x.clone(); }

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::to(Device device, ScalarType dtype, bool copy) const {
  Device here = this->device();
  if (!copy && here == device && this->dtype() == dtype) return *this;
  Tensor out = detail::empty_tensor(sizes(), dtype, device);
  out.copy_(*this);
  out.storage()->reset_version();
  return out;
}

Tensor Tensor::to(Device device, bool copy) const { return to(device, dtype(), copy); }
Tensor Tensor::to(ScalarType dtype, bool copy) const { return to(device(), dtype, copy); }
Tensor Tensor::to(const TensorOptions& options, bool copy) const {
  KILN_CHECK(!options.requires_grad(), "to(options) expects unset requires_grad flag, but got ",
             "options.requires_grad set as true; call requires_grad_() on the result instead");
  return to(options.device_opt().value_or(device()), options.dtype_or(dtype()), copy);
}

}  // namespace kiln

// --- gradients (Note [Gradients next to operators]) ----------------------------------------------
namespace kiln::detail {
namespace {

// copy_ overwrites self: its old value gets no gradient; src gets the gradient, converted back
// to its dtype and device and summed over the broadcast dimensions.
Tensor copy_autograd(const CopyOp& op, const Tensor& self, const Tensor& src) {
  bool record = autograd::GradMode::is_enabled() && (self.requires_grad() || src.requires_grad());
  if (record) autograd::detail::check_inplace(self, op.name(), /*rebases_views=*/true);
  Tensor view_base = record ? autograd::detail::view_base_of(self) : Tensor();
  {
    ExcludeDispatchKeyGuard below(DispatchKey::Autograd);
    op(self, src);
  }
  if (!record) return self;
  DimVector src_sizes(src.sizes());
  ScalarType src_dtype = src.dtype();
  Device src_device = src.device();
  autograd::detail::record(
      "CopyBackwards", {&self, &src}, {&self},
      [src_sizes, src_dtype, src_device](autograd::detail::FunctionNode& n,
                                         const std::vector<Tensor>& g) {
        std::vector<Tensor> out(2);
        if (n.needs_input_grad(0)) out[0] = zeros_like(g[0]);
        if (n.needs_input_grad(1)) {
          out[1] = autograd::detail::sum_to(g[0], src_sizes).to(src_device, src_dtype);
        }
        return out;
      });
  autograd::detail::rebase_view(self, view_base);  // See Note [In-place on views]
  return self;
}

const bool copy_backward_registered = [] {
  copy_op.set_kernel(DispatchKey::Autograd, copy_autograd);
  fill_op.set_kernel(DispatchKey::Autograd,
                     autograd::detail::overwrite_kernel<FillOp, const Scalar&>);
  return true;
}();

}  // namespace
}  // namespace kiln::detail
