// Options of padding, as libtorch's (torch/nn/options/padding.h): F::PadFuncOptions({1, 1, 2, 0})
// .mode(kiln::kReflect), ReflectionPad2dOptions({1, 1, 2, 0}), ConstantPad1dOptions(2, 3.5),
// ZeroPad2dOptions(1). A padding lists (before, after) pairs from the last dimension backwards.
#pragma once

#include <kiln/nn/options.h>
#include <kiln/nn/options/conv.h>

#include <variant>
#include <vector>

namespace kiln::nn {

struct PadOptions {
  PadOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: as libtorch
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate,
                              enumtype::kCircular>;
  // 2 * m sizes, m at most the input's rank: (before, after) of the last dimension first
  KILN_ARG(std::vector<int64_t>, pad);
  KILN_ARG(mode_t, mode) = kConstant;
  // the value of kConstant's padding
  KILN_ARG(double, value) = 0;
};

namespace functional {
using PadFuncOptions = PadOptions;
}  // namespace functional

// (left, right) for 1-D, (left, right, top, bottom) for 2-D, and (front, back) added for 3-D.
template <size_t D>
struct ReflectionPadOptions {
  ReflectionPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}  // NOLINT
  KILN_ARG(ExpandingArray<D * 2>, padding);
};
using ReflectionPad1dOptions = ReflectionPadOptions<1>;
using ReflectionPad2dOptions = ReflectionPadOptions<2>;
using ReflectionPad3dOptions = ReflectionPadOptions<3>;

template <size_t D>
struct ReplicationPadOptions {
  ReplicationPadOptions(ExpandingArray<D * 2> padding) : padding_(padding) {}  // NOLINT
  KILN_ARG(ExpandingArray<D * 2>, padding);
};
using ReplicationPad1dOptions = ReplicationPadOptions<1>;
using ReplicationPad2dOptions = ReplicationPadOptions<2>;
using ReplicationPad3dOptions = ReplicationPadOptions<3>;

struct ZeroPad2dOptions {
  ZeroPad2dOptions(ExpandingArray<4> padding) : padding_(padding) {}  // NOLINT: as libtorch
  KILN_ARG(ExpandingArray<4>, padding);
};

template <size_t D>
struct ConstantPadOptions {
  ConstantPadOptions(ExpandingArray<D * 2> padding, double value)
      : padding_(padding), value_(value) {}
  KILN_ARG(ExpandingArray<D * 2>, padding);
  KILN_ARG(double, value);
};
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

}  // namespace kiln::nn
