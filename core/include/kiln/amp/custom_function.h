// custom_fwd / custom_bwd for kiln::autograd::Function<T>, as torch.amp.custom_fwd/custom_bwd.
// C++ has no decorators: each is a guard declared first thing in forward and backward.
//
//   struct MyMM : kiln::autograd::Function<MyMM> {
//     static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
//       kiln::amp::custom_fwd amp(ctx, kiln::kCPU);  // runs under the caller's autocast state
//       ctx->save_for_backward({a, b});
//       return a.mm(b);
//     }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       kiln::amp::custom_bwd amp(ctx);              // runs under forward's autocast state
//       ...
//     }
//   };
//
// With cast_inputs (`custom_fwd amp(ctx, kiln::kCPU, kiln::kFloat)`) inside an enabled region,
// amp.cast(x) casts floating inputs on the device type (not float64) to that dtype, and forward
// and backward run with autocast disabled. Outside a region, cast() returns its input and the
// region's state is left alone.
#pragma once

#include <kiln/amp/autocast.h>
#include <kiln/custom_function.h>
#include <kiln/export.h>

#include <optional>

namespace kiln::amp {

class KILN_API custom_fwd {
 public:
  custom_fwd(autograd::AutogradContext* ctx, DeviceType device_type,
             std::optional<ScalarType> cast_inputs = std::nullopt);
  custom_fwd(const custom_fwd&) = delete;
  custom_fwd& operator=(const custom_fwd&) = delete;

  // x cast to cast_inputs when forward casts (see above); otherwise x.
  Tensor cast(const Tensor& x) const;
  autograd::variable_list cast(const autograd::variable_list& xs) const;

 private:
  DeviceType device_type_;
  std::optional<ScalarType> cast_to_;  // set only when casting
  std::optional<autocast> disabled_;   // autocast off for forward when casting
};

class KILN_API custom_bwd {
 public:
  // Throws when forward did not declare custom_fwd.
  explicit custom_bwd(autograd::AutogradContext* ctx);
  custom_bwd(const custom_bwd&) = delete;
  custom_bwd& operator=(const custom_bwd&) = delete;

 private:
  std::optional<autocast> region_;
};

}  // namespace kiln::amp
