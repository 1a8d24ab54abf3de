// Pointwise programs: the optional primitive `fused_pointwise` (docs/primitives.md, "Fused
// pointwise programs") as core sees it. The graph pass kiln::jit::fuse_pointwise (kiln/jit.h)
// writes one per chain of pointwise operators; a program is plain data (integers and doubles),
// so a saved graph can store it as is. The op codes are kiln/sdk/pointwise_program.hpp's.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::jit {

struct PointwiseStep {
  int32_t op = 0;                  // a kiln::sdk::program::Op
  ScalarType dtype = kFloat;       // the register's dtype: the step's result is rounded to it
  int32_t a = -1, b = -1, c = -1;  // operand registers (CONST: a indexes constants)
};

struct KILN_API PointwiseProgram {
  int64_t version = 1;
  ScalarType compute = kFloat;       // kFloat (16-bit floats and float32), kDouble, or kLong
  int32_t n_inputs = 0;              // registers 0 .. n_inputs-1
  std::vector<PointwiseStep> steps;  // step k writes register n_inputs + k
  std::vector<int32_t> outputs;      // one register per output
  std::vector<double> constants;     // CONST values (kLong programs: integers, exact to 2^53)

  // The flat form the operator takes: version, compute, n_inputs, n_steps, n_outputs,
  // n_constants, then 5 integers per step (op, dtype, a, b, c), the output registers, and the
  // constants (the bits of each double; kLong programs: the integer).
  std::vector<int64_t> encode() const;
  // The inverse of encode(); raises kiln::ValueError for a malformed list.
  static PointwiseProgram decode(IntArrayRef flat);
  // "r2 = exp(r0); r3 = mul(r2, r1) -> (r3)".
  std::string str() const;
};

// Runs a program on inputs (broadcast to a common shape, on one device that has the primitive;
// any dtypes the program's compute type can load); returns one new contiguous tensor per output,
// of its register's dtype. Raises kiln::ValueError for an invalid program (every field checked),
// kiln::NotImplementedError on a device without the primitive, and refuses inputs that require
// grad under grad mode (the program has no backward: the pass keeps the unfused operators for
// that).
KILN_API std::vector<Tensor> run_pointwise_program(const std::vector<Tensor>& inputs,
                                                   const PointwiseProgram& program);

// Whether a device type's plugin provides fused_pointwise.
KILN_API bool has_fused_pointwise(DeviceType type);

}  // namespace kiln::jit
