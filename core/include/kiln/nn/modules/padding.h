// Padding layers, as libtorch's: ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ZeroPad2d,
// ConstantPad1d/2d/3d. Each forward is F::pad with the module's padding and mode; each prints as
// libtorch's (kiln::nn::ReflectionPad2d(padding=[1, 1, 2, 0])).
#pragma once

#include <kiln/nn/functional/padding.h>
#include <kiln/nn/module.h>

#include <ostream>

namespace kiln::nn {

// The shared part of the padding modules: options of type Options, padded in mode Mode.
template <size_t D, class Options, class Mode>
class PadImpl : public Module {
 public:
  PadImpl(ExpandingArray<D * 2> padding) : PadImpl(Options(padding)) {}  // NOLINT: as libtorch
  explicit PadImpl(const Options& options) : options(options) {}
  // Nothing to (re)initialise: a padding has no parameters or buffers.
  void reset() {}
  // F::pad(input, F::PadFuncOptions(padding).mode(Mode)).
  Tensor forward(const Tensor& input) {
    const ExpandingArray<D* 2>& p = options.padding();
    return functional::pad(input,
                           functional::PadFuncOptions({p.data(), p.data() + D * 2}).mode(Mode{}));
  }

  Options options;
};

class KILN_API ReflectionPad1dImpl : public PadImpl<1, ReflectionPad1dOptions, enumtype::kReflect> {
 public:
  using PadImpl<1, ReflectionPad1dOptions, enumtype::kReflect>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReflectionPad1d);

class KILN_API ReflectionPad2dImpl : public PadImpl<2, ReflectionPad2dOptions, enumtype::kReflect> {
 public:
  using PadImpl<2, ReflectionPad2dOptions, enumtype::kReflect>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReflectionPad2d);

class KILN_API ReflectionPad3dImpl : public PadImpl<3, ReflectionPad3dOptions, enumtype::kReflect> {
 public:
  using PadImpl<3, ReflectionPad3dOptions, enumtype::kReflect>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReflectionPad3d);

class KILN_API ReplicationPad1dImpl
    : public PadImpl<1, ReplicationPad1dOptions, enumtype::kReplicate> {
 public:
  using PadImpl<1, ReplicationPad1dOptions, enumtype::kReplicate>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReplicationPad1d);

class KILN_API ReplicationPad2dImpl
    : public PadImpl<2, ReplicationPad2dOptions, enumtype::kReplicate> {
 public:
  using PadImpl<2, ReplicationPad2dOptions, enumtype::kReplicate>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReplicationPad2d);

class KILN_API ReplicationPad3dImpl
    : public PadImpl<3, ReplicationPad3dOptions, enumtype::kReplicate> {
 public:
  using PadImpl<3, ReplicationPad3dOptions, enumtype::kReplicate>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ReplicationPad3d);

class KILN_API ZeroPad2dImpl : public PadImpl<2, ZeroPad2dOptions, enumtype::kConstant> {
 public:
  using PadImpl<2, ZeroPad2dOptions, enumtype::kConstant>::PadImpl;
  void pretty_print(std::ostream& stream) const override;
};
KILN_MODULE(ZeroPad2d);

// ConstantPad1d/2d/3d: the padding filled with options.value().
template <size_t D>
class ConstantPadImpl : public Module {
 public:
  ConstantPadImpl(ExpandingArray<D * 2> padding, double value)
      : ConstantPadImpl(ConstantPadOptions<D>(padding, value)) {}
  explicit ConstantPadImpl(const ConstantPadOptions<D>& options) : options(options) {}
  // Nothing to (re)initialise: a padding has no parameters or buffers.
  void reset() {}
  // F::pad(input, F::PadFuncOptions(padding).value(value)).
  Tensor forward(const Tensor& input) {
    const ExpandingArray<D* 2>& p = options.padding();
    return functional::pad(
        input, functional::PadFuncOptions({p.data(), p.data() + D * 2}).value(options.value()));
  }
  void pretty_print(std::ostream& stream) const override {
    stream << "kiln::nn::ConstantPad" << D << "d(padding=" << options.padding()
           << ", value=" << options.value() << ")";
  }

  ConstantPadOptions<D> options;
};

class KILN_API ConstantPad1dImpl : public ConstantPadImpl<1> {
 public:
  using ConstantPadImpl<1>::ConstantPadImpl;
};
KILN_MODULE(ConstantPad1d);
class KILN_API ConstantPad2dImpl : public ConstantPadImpl<2> {
 public:
  using ConstantPadImpl<2>::ConstantPadImpl;
};
KILN_MODULE(ConstantPad2d);
class KILN_API ConstantPad3dImpl : public ConstantPadImpl<3> {
 public:
  using ConstantPadImpl<3>::ConstantPadImpl;
};
KILN_MODULE(ConstantPad3d);

}  // namespace kiln::nn
