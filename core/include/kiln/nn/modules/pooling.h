// Pooling layers, as libtorch's: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
// AdaptiveAvgPool1d/2d/3d, MaxUnpool1d/2d/3d, LPPool1d/2d. Each forward is the function of
// kiln/nn/functional/pooling.h with the module's options; each prints as libtorch's
// (kiln::nn::MaxPool2d(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1],
// ceil_mode=false)).
#pragma once

#include <kiln/nn/functional/pooling.h>
#include <kiln/nn/module.h>

#include <ostream>
#include <tuple>

namespace kiln::nn {

// The shared part of MaxPool1d/2d/3d.
template <size_t D, class Derived>
class MaxPoolImpl : public Module {
 public:
  MaxPoolImpl(ExpandingArray<D> kernel_size)  // NOLINT: as libtorch
      : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options) : options(options) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::MaxPool" << D << "d(kernel_size=" << options.kernel_size().ref()
           << ", stride=" << options.stride().ref() << ", padding=" << options.padding().ref()
           << ", dilation=" << options.dilation().ref()
           << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
  }

  MaxPoolOptions<D> options;
};

class KILN_API MaxPool1dImpl : public MaxPoolImpl<1, MaxPool1dImpl> {
 public:
  using MaxPoolImpl<1, MaxPool1dImpl>::MaxPoolImpl;
  // functional::max_pool1d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool1d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(MaxPool1d);

class KILN_API MaxPool2dImpl : public MaxPoolImpl<2, MaxPool2dImpl> {
 public:
  using MaxPoolImpl<2, MaxPool2dImpl>::MaxPoolImpl;
  // functional::max_pool2d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool2d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(MaxPool2d);

class KILN_API MaxPool3dImpl : public MaxPoolImpl<3, MaxPool3dImpl> {
 public:
  using MaxPoolImpl<3, MaxPool3dImpl>::MaxPoolImpl;
  // functional::max_pool3d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool3d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(MaxPool3d);

// The shared part of AvgPool1d/2d/3d.
template <size_t D, class Derived>
class AvgPoolImpl : public Module {
 public:
  AvgPoolImpl(ExpandingArray<D> kernel_size)  // NOLINT: as libtorch
      : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options) : options(options) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::AvgPool" << D << "d(kernel_size=" << options.kernel_size().ref()
           << ", stride=" << options.stride().ref() << ", padding=" << options.padding().ref()
           << ")";
  }

  AvgPoolOptions<D> options;
};

class KILN_API AvgPool1dImpl : public AvgPoolImpl<1, AvgPool1dImpl> {
 public:
  using AvgPoolImpl<1, AvgPool1dImpl>::AvgPoolImpl;
  // functional::avg_pool1d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AvgPool1d);

class KILN_API AvgPool2dImpl : public AvgPoolImpl<2, AvgPool2dImpl> {
 public:
  using AvgPoolImpl<2, AvgPool2dImpl>::AvgPoolImpl;
  // functional::avg_pool2d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AvgPool2d);

class KILN_API AvgPool3dImpl : public AvgPoolImpl<3, AvgPool3dImpl> {
 public:
  using AvgPoolImpl<3, AvgPool3dImpl>::AvgPoolImpl;
  // functional::avg_pool3d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AvgPool3d);

// The shared part of the adaptive poolings: `kind` is "Max" or "Avg".
template <class Options, size_t D>
class AdaptivePoolImpl : public Module {
 public:
  explicit AdaptivePoolImpl(const Options& options, const char* kind)
      : options(options), kind_(kind) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::Adaptive" << kind_ << "Pool" << D
           << "d(output_size=" << ExpandingArrayWithOptional<D>(options.output_size()) << ")";
  }

  Options options;

 private:
  const char* kind_;
};

class KILN_API AdaptiveMaxPool1dImpl : public AdaptivePoolImpl<AdaptiveMaxPool1dOptions, 1> {
 public:
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options)
      : AdaptivePoolImpl(options, "Max") {}
  explicit AdaptiveMaxPool1dImpl(ExpandingArray<1> output_size)
      : AdaptiveMaxPool1dImpl(AdaptiveMaxPool1dOptions(output_size)) {}
  // functional::adaptive_max_pool1d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool1d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(AdaptiveMaxPool1d);

class KILN_API AdaptiveMaxPool2dImpl : public AdaptivePoolImpl<AdaptiveMaxPool2dOptions, 2> {
 public:
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options)
      : AdaptivePoolImpl(options, "Max") {}
  explicit AdaptiveMaxPool2dImpl(ExpandingArrayWithOptional<2> output_size)
      : AdaptiveMaxPool2dImpl(AdaptiveMaxPool2dOptions(output_size)) {}
  // functional::adaptive_max_pool2d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool2d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(AdaptiveMaxPool2d);

class KILN_API AdaptiveMaxPool3dImpl : public AdaptivePoolImpl<AdaptiveMaxPool3dOptions, 3> {
 public:
  explicit AdaptiveMaxPool3dImpl(const AdaptiveMaxPool3dOptions& options)
      : AdaptivePoolImpl(options, "Max") {}
  explicit AdaptiveMaxPool3dImpl(ExpandingArrayWithOptional<3> output_size)
      : AdaptiveMaxPool3dImpl(AdaptiveMaxPool3dOptions(output_size)) {}
  // functional::adaptive_max_pool3d(input, options).
  Tensor forward(const Tensor& input);
  // (output, indices), the indices for MaxUnpool3d.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
};
KILN_MODULE(AdaptiveMaxPool3d);

class KILN_API AdaptiveAvgPool1dImpl : public AdaptivePoolImpl<AdaptiveAvgPool1dOptions, 1> {
 public:
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options)
      : AdaptivePoolImpl(options, "Avg") {}
  explicit AdaptiveAvgPool1dImpl(ExpandingArray<1> output_size)
      : AdaptiveAvgPool1dImpl(AdaptiveAvgPool1dOptions(output_size)) {}
  // functional::adaptive_avg_pool1d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AdaptiveAvgPool1d);

class KILN_API AdaptiveAvgPool2dImpl : public AdaptivePoolImpl<AdaptiveAvgPool2dOptions, 2> {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : AdaptivePoolImpl(options, "Avg") {}
  explicit AdaptiveAvgPool2dImpl(ExpandingArrayWithOptional<2> output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  // functional::adaptive_avg_pool2d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AdaptiveAvgPool2d);

class KILN_API AdaptiveAvgPool3dImpl : public AdaptivePoolImpl<AdaptiveAvgPool3dOptions, 3> {
 public:
  explicit AdaptiveAvgPool3dImpl(const AdaptiveAvgPool3dOptions& options)
      : AdaptivePoolImpl(options, "Avg") {}
  explicit AdaptiveAvgPool3dImpl(ExpandingArrayWithOptional<3> output_size)
      : AdaptiveAvgPool3dImpl(AdaptiveAvgPool3dOptions(output_size)) {}
  // functional::adaptive_avg_pool3d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(AdaptiveAvgPool3d);

// The shared part of MaxUnpool1d/2d/3d.
template <size_t D, class Derived>
class MaxUnpoolImpl : public Module {
 public:
  MaxUnpoolImpl(ExpandingArray<D> kernel_size)  // NOLINT: as libtorch
      : MaxUnpoolImpl(MaxUnpoolOptions<D>(kernel_size)) {}
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& options) : options(options) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::MaxUnpool" << D << "d(kernel_size=" << options.kernel_size().ref()
           << ", stride=" << options.stride().ref() << ", padding=" << options.padding().ref()
           << ")";
  }

  MaxUnpoolOptions<D> options;
};

class KILN_API MaxUnpool1dImpl : public MaxUnpoolImpl<1, MaxUnpool1dImpl> {
 public:
  using MaxUnpoolImpl<1, MaxUnpool1dImpl>::MaxUnpoolImpl;
  // functional::max_unpool1d(input, indices) with the module's options and output_size.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
};
KILN_MODULE(MaxUnpool1d);

class KILN_API MaxUnpool2dImpl : public MaxUnpoolImpl<2, MaxUnpool2dImpl> {
 public:
  using MaxUnpoolImpl<2, MaxUnpool2dImpl>::MaxUnpoolImpl;
  // functional::max_unpool2d(input, indices) with the module's options and output_size.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
};
KILN_MODULE(MaxUnpool2d);

class KILN_API MaxUnpool3dImpl : public MaxUnpoolImpl<3, MaxUnpool3dImpl> {
 public:
  using MaxUnpoolImpl<3, MaxUnpool3dImpl>::MaxUnpoolImpl;
  // functional::max_unpool3d(input, indices) with the module's options and output_size.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
};
KILN_MODULE(MaxUnpool3d);

// The shared part of LPPool1d/2d.
template <size_t D, class Derived>
class LPPoolImpl : public Module {
 public:
  explicit LPPoolImpl(const LPPoolOptions<D>& options) : options(options) {}
  LPPoolImpl(double norm_type, ExpandingArray<D> kernel_size)
      : LPPoolImpl(LPPoolOptions<D>(norm_type, kernel_size)) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::LPPool" << D << "d(norm_type=" << options.norm_type()
           << ", kernel_size=" << options.kernel_size().ref()
           << ", stride=" << options.stride().ref()
           << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
  }

  LPPoolOptions<D> options;
};

class KILN_API LPPool1dImpl : public LPPoolImpl<1, LPPool1dImpl> {
 public:
  using LPPoolImpl<1, LPPool1dImpl>::LPPoolImpl;
  // functional::lp_pool1d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(LPPool1d);

class KILN_API LPPool2dImpl : public LPPoolImpl<2, LPPool2dImpl> {
 public:
  using LPPoolImpl<2, LPPool2dImpl>::LPPoolImpl;
  // functional::lp_pool2d(input, options).
  Tensor forward(const Tensor& input);
};
KILN_MODULE(LPPool2d);

}  // namespace kiln::nn
