// The pointwise program of the optional primitive `fused_pointwise` (ABI 1.4; docs/primitives.md,
// "Fused pointwise programs"): a short list of elementwise steps over registers, which the graph
// pass kiln::jit::fuse_pointwise makes from a chain of pointwise operators so that a device reads
// the chain's inputs once and writes its outputs once. Everything here is plain data and
// KILN_HOST_DEVICE code, shared by every device: the op table (versioned: a value's meaning never
// changes; new ops take new values under a new kVersion), the validation of a call's program, the
// rounding of a register to its dtype, and the step formulas, each the functor of
// kiln/sdk/pointwise.hpp that the unfused operator's kernel uses.
//
// Layout of a call (attributes in this order):
//   0 `version` i64   the table version the program was written for (kVersion or older)
//   1 `compute` i64   the compute type of every register: KILN_F32 (float16, bfloat16 and
//                     float32 programs), KILN_F64, or KILN_I64 (integer and bool programs)
//   2 `steps` i64s    kStepFields integers per step: op, dtype, a, b, c
//   3 `outputs` i64s  one register per output
//   4 `constants` i64s  the CONST values: the bits of a double (F32 and F64 programs) or an
//                     int64 (I64 programs)
// Registers 0 .. n_inputs-1 hold the inputs (converted to the compute type); step k writes
// register n_inputs + k, then rounds it to its dtype (a float16 step is rounded to float16, an
// int32 step wraps to int32), which is what the unfused operator of that dtype stores. Operands
// a, b, c name earlier registers (-1 where the op takes fewer); CONST's `a` indexes `constants`.
// Inputs come with the output's sizes (a broadcast dimension has stride 0) and any strides.
#pragma once

#include <kiln/sdk/half.hpp>
#include <kiln/sdk/kernel.hpp>
#include <kiln/sdk/plugin.h>
#include <kiln/sdk/pointwise.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::sdk::program {

constexpr int64_t kVersion = 1;
constexpr int64_t kStepFields = 5;
constexpr int64_t kMaxInputs = 16;  // the core passes at most 16 operands of each side
constexpr int64_t kMaxOutputs = 8;
constexpr int64_t kMaxSteps = 1024;
constexpr int64_t kMaxConstants = 1024;

// The op table, version 1. Values are part of the ABI.
enum Op : int32_t {
  CONST = 0,  // constants[a]
  CAST = 1,   // a, rounded to the step's dtype
  NEG = 2,
  ABS = 3,
  RELU = 4,
  EXP = 5,
  LOG = 6,
  TANH = 7,
  SIGMOID = 8,
  GELU = 9,        // the erf form
  GELU_TANH = 10,  // the tanh approximation
  SILU = 11,
  SQRT = 12,
  RSQRT = 13,
  RECIPROCAL = 14,
  LOG1P = 15,
  EXPM1 = 16,
  SIN = 17,
  COS = 18,
  ERF = 19,
  FLOOR = 20,
  CEIL = 21,
  TRUNC = 22,
  SIGN = 23,
  LOGICAL_NOT = 24,
  ADD = 25,
  SUB = 26,
  MUL = 27,
  DIV = 28,
  POW = 29,
  MAXIMUM = 30,
  MINIMUM = 31,
  LEAKY_RELU = 32,  // a, with the negative slope b
  EQ = 33,
  NE = 34,
  LT = 35,
  LE = 36,
  GT = 37,
  GE = 38,
  LOGICAL_AND = 39,
  LOGICAL_OR = 40,
  LOGICAL_XOR = 41,
  WHERE = 42,  // a (the condition, nonzero: true) ? b : c
  kNumOps = 43
};

// The kiln operator each op runs (CONST and CAST: none), for messages and printing.
inline const char* op_name(int32_t op) {
  static const char* const names[kNumOps] = {
      "const",      "cast",    "neg",     "abs",         "relu",        "exp",        "log",
      "tanh",       "sigmoid", "gelu",    "gelu_tanh",   "silu",        "sqrt",       "rsqrt",
      "reciprocal", "log1p",   "expm1",   "sin",         "cos",         "erf",        "floor",
      "ceil",       "trunc",   "sign",    "logical_not", "add",         "sub",        "mul",
      "div",        "pow",     "maximum", "minimum",     "leaky_relu",  "eq",         "ne",
      "lt",         "le",      "gt",      "ge",          "logical_and", "logical_or", "logical_xor",
      "where"};
  return op >= 0 && op < kNumOps ? names[op] : "unknown";
}

// How many register operands op reads (CONST: none; its `a` is a constant index).
KILN_HOST_DEVICE inline int arity(int32_t op) {
  if (op == CONST) return 0;
  if (op == WHERE) return 3;
  if (op >= ADD && op <= LOGICAL_XOR) return 2;
  return 1;
}

// Whether an I64 (integer and bool) program may use op: the ops whose integer kernels wrap and
// cannot fail.
KILN_HOST_DEVICE inline bool integer_op(int32_t op) {
  switch (op) {
    case CONST:
    case CAST:
    case NEG:
    case ABS:
    case RELU:
    case SIGN:
    case LOGICAL_NOT:
    case ADD:
    case SUB:
    case MUL:
    case MAXIMUM:
    case MINIMUM:
    case EQ:
    case NE:
    case LT:
    case LE:
    case GT:
    case GE:
    case LOGICAL_AND:
    case LOGICAL_OR:
    case LOGICAL_XOR:
    case WHERE:
    case FLOOR:
    case CEIL:
    case TRUNC: return true;
    default: return false;
  }
}

// Whether a register of `dtype` may live in compute type `compute`: float16, bfloat16 and float32
// in F32 programs, float64 in F64 ones, the integers in I64 ones; bool in any (0 or 1).
KILN_HOST_DEVICE inline bool dtype_fits(int32_t compute, int32_t dtype) {
  if (dtype == KILN_BOOL) return true;
  switch (compute) {
    case KILN_F32: return dtype == KILN_F32 || dtype == KILN_F16 || dtype == KILN_BF16;
    case KILN_F64: return dtype == KILN_F64;
    case KILN_I64: return dtype >= KILN_U8 && dtype <= KILN_I64;
    default: return false;
  }
}

// A validated program: views into the call's attributes.
struct Program {
  int64_t version = 0;
  int32_t compute = 0;
  int64_t n_inputs = 0;
  int64_t n_steps = 0;
  const int64_t* steps = nullptr;  // n_steps * kStepFields
  int64_t n_outputs = 0;
  const int64_t* outputs = nullptr;
  int64_t n_constants = 0;
  const int64_t* constants = nullptr;
  int64_t n_registers() const { return n_inputs + n_steps; }
};

// Checks every field of a program (counts, op codes, dtypes, register indexes, constant indexes)
// against its inputs' and outputs' dtypes; returns an empty string when it is valid, else what is
// wrong. A plugin throws std::invalid_argument with it (a ValueError). Host code only.
inline std::string validate(const Program& p, const int32_t* input_dtypes,
                            const int32_t* output_dtypes) {
  auto str = [](int64_t v) { return std::to_string(v); };
  if (p.version < 1 || p.version > kVersion) {
    return "program version " + str(p.version) + " is not supported (this plugin reads 1 to " +
           str(kVersion) + ")";
  }
  if (p.compute != KILN_F32 && p.compute != KILN_F64 && p.compute != KILN_I64) {
    return "compute type " + str(p.compute) + " is not float32, float64 or int64";
  }
  if (p.n_inputs < 0 || p.n_inputs > kMaxInputs) {
    return str(p.n_inputs) + " inputs (at most " + str(kMaxInputs) + ")";
  }
  if (p.n_outputs < 1 || p.n_outputs > kMaxOutputs) {
    return str(p.n_outputs) + " outputs (1 to " + str(kMaxOutputs) + ")";
  }
  if (p.n_steps < 1 || p.n_steps > kMaxSteps) {
    return str(p.n_steps) + " steps (1 to " + str(kMaxSteps) + ")";
  }
  if (p.n_constants < 0 || p.n_constants > kMaxConstants) {
    return str(p.n_constants) + " constants (at most " + str(kMaxConstants) + ")";
  }
  if ((p.n_steps > 0 && p.steps == nullptr) || p.outputs == nullptr ||
      (p.n_constants > 0 && p.constants == nullptr)) {
    return "a list of the program is missing";
  }
  for (int64_t i = 0; i < p.n_inputs; ++i) {
    if (input_dtypes[i] < 0 || input_dtypes[i] >= KILN_NUM_DTYPES) {
      return "input " + str(i) + " has an unknown dtype " + str(input_dtypes[i]);
    }
    // inputs are converted to the compute type when loaded: exactly, or as the unfused
    // operator's own conversion does (an integer into float)
    const bool floating = input_dtypes[i] == KILN_F16 || input_dtypes[i] == KILN_BF16 ||
                          input_dtypes[i] == KILN_F32 || input_dtypes[i] == KILN_F64;
    if ((p.compute == KILN_I64 && floating) ||
        (p.compute == KILN_F32 && input_dtypes[i] == KILN_F64)) {
      return "input " + str(i) + " is " + sdk::dtype_name(input_dtypes[i]) + ", which a " +
             sdk::dtype_name(p.compute) + " program cannot load";
    }
  }
  for (int64_t k = 0; k < p.n_steps; ++k) {
    const int64_t* s = p.steps + k * kStepFields;
    const int64_t op = s[0], dtype = s[1];
    const std::string where = "step " + str(k) + " (" + op_name(static_cast<int32_t>(op)) + ")";
    if (op < 0 || op >= kNumOps) return "step " + str(k) + ": unknown op code " + str(op);
    if (dtype < 0 || dtype >= KILN_NUM_DTYPES ||
        !dtype_fits(p.compute, static_cast<int32_t>(dtype))) {
      return where + ": dtype " + str(dtype) + " cannot be a register of a " +
             sdk::dtype_name(p.compute) + " program";
    }
    if (p.compute == KILN_I64 && !integer_op(static_cast<int32_t>(op))) {
      return where + ": not an op of integer programs";
    }
    const int n = arity(static_cast<int32_t>(op));
    const int64_t defined = p.n_inputs + k;  // registers written before this step
    for (int j = 0; j < 3; ++j) {
      const int64_t r = s[2 + j];
      if (op == CONST && j == 0) {
        if (r < 0 || r >= p.n_constants) {
          return where + ": constant index " + str(r) + " out of range (" + str(p.n_constants) +
                 " constants)";
        }
      } else if (j < n) {
        if (r < 0 || r >= defined) {
          return where + ": operand register " + str(r) + " is not written before it (" +
                 str(defined) + " registers so far)";
        }
      } else if (r != -1) {
        return where + ": unused operand " + str(j) + " must be -1, got " + str(r);
      }
    }
  }
  for (int64_t i = 0; i < p.n_outputs; ++i) {
    const int64_t r = p.outputs[i];
    if (r < 0 || r >= p.n_registers()) {
      return "output " + str(i) + ": register " + str(r) + " out of range (" +
             str(p.n_registers()) + " registers)";
    }
    const int64_t dtype = r < p.n_inputs ? input_dtypes[r]
                                         : p.steps[(r - p.n_inputs) * kStepFields + 1];
    if (dtype != output_dtypes[i]) {
      return "output " + str(i) + " is " + sdk::dtype_name(output_dtypes[i]) +
             " but its register " + str(r) + " is " + sdk::dtype_name(static_cast<int32_t>(dtype));
    }
  }
  return {};
}

// A call's program (its attributes, see the layout above), validated against the call's
// operands: also that inputs and outputs have output 0's sizes. Throws std::invalid_argument (a
// ValueError) naming what is wrong. Host code only.
inline Program read(const Call& call) {
  Program p;
  p.version = call.attr_i64(0);
  p.compute = static_cast<int32_t>(call.attr_i64(1));
  int32_t n = 0;
  p.steps = call.attr_list(2, &n);
  if (n % kStepFields != 0) {
    throw std::invalid_argument("the steps list has " + std::to_string(n) +
                                " entries, not a multiple of " + std::to_string(kStepFields));
  }
  p.n_steps = n / kStepFields;
  p.outputs = call.attr_list(3, &n);
  p.n_outputs = n;
  p.constants = call.attr_list(4, &n);
  p.n_constants = n;
  p.n_inputs = call.num_inputs();
  if (p.n_outputs != call.num_outputs()) {
    throw std::invalid_argument("the program has " + std::to_string(p.n_outputs) +
                                " outputs, the call " + std::to_string(call.num_outputs()));
  }
  std::vector<int32_t> in_dtypes, out_dtypes;
  for (int32_t i = 0; i < call.num_inputs(); ++i) in_dtypes.push_back(call.input(i).dtype);
  for (int32_t i = 0; i < call.num_outputs(); ++i) out_dtypes.push_back(call.output(i).dtype);
  std::string error = validate(p, in_dtypes.data(), out_dtypes.data());
  if (!error.empty()) throw std::invalid_argument(error);
  const kiln_tensor& first = call.output(0);
  auto same_sizes = [&](const kiln_tensor& t, const char* what, int32_t i) {
    bool same = t.ndim == first.ndim;
    for (int32_t d = 0; same && d < t.ndim; ++d) same = t.sizes[d] == first.sizes[d];
    if (!same) {
      throw std::invalid_argument(std::string(what) + " " + std::to_string(i) +
                                  " does not have the sizes of output 0 (the core expands "
                                  "inputs to the output's sizes)");
    }
  };
  for (int32_t i = 0; i < call.num_inputs(); ++i) same_sizes(call.input(i), "input", i);
  for (int32_t i = 1; i < call.num_outputs(); ++i) same_sizes(call.output(i), "output", i);
  return p;
}

// x rounded to what a tensor of `dtype` holds, in compute type C: the rounding each unfused
// operator does when it stores its result.
template <class C>
KILN_HOST_DEVICE inline C narrow(int32_t dtype, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (dtype) {
      case KILN_BOOL: return x != C(0) ? C(1) : C(0);
      case KILN_F16: return static_cast<C>(static_cast<float>(Half(static_cast<float>(x))));
      case KILN_BF16: return static_cast<C>(static_cast<float>(BFloat16(static_cast<float>(x))));
      case KILN_F32: return static_cast<C>(static_cast<float>(x));
      default: return x;
    }
  } else {
    switch (dtype) {
      case KILN_BOOL: return x != C(0) ? C(1) : C(0);
      case KILN_U8: return static_cast<C>(static_cast<uint8_t>(x));
      case KILN_I8: return static_cast<C>(static_cast<int8_t>(x));
      case KILN_I16: return static_cast<C>(static_cast<int16_t>(x));
      case KILN_I32: return static_cast<C>(static_cast<int32_t>(x));
      default: return x;
    }
  }
}

// A constant of the program as compute type C.
template <class C>
inline C constant(const Program& p, int64_t index) {
  const int64_t bits = p.constants[index];
  if constexpr (std::is_floating_point_v<C>) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return static_cast<C>(d);
  } else {
    return static_cast<C>(bits);
  }
}

namespace detail {
template <class Op>
struct Unary {
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C, C) const {
    return static_cast<C>(Op{}(a));
  }
};
template <class Op>
struct Binary {
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C b, C) const {
    return static_cast<C>(Op{}(a, b));
  }
};
struct GeluErf {
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C, C) const {
    return pointwise::Gelu<C>{C(0)}(a);
  }
};
struct GeluTanh {
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C, C) const {
    return pointwise::Gelu<C>{C(1)}(a);
  }
};
struct LeakyRelu {
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C slope, C) const {
    return pointwise::LeakyRelu<C>{slope}(a);
  }
};
struct Select {
  template <class C>
  KILN_HOST_DEVICE C operator()(C c, C a, C b) const {
    return c != C(0) ? a : b;
  }
};
struct Copy {  // CAST: the rounding follows
  template <class C>
  KILN_HOST_DEVICE C operator()(C a, C, C) const {
    return a;
  }
};
}  // namespace detail

// Calls f(functor) with the functor of op (called as functor(a, b, c) on compute-type values);
// returns false for CONST and for an op the compute type C does not take (f is not called).
// The functors are the unfused operators' (kiln/sdk/pointwise.hpp), so a fused step computes the
// bits its operator would.
template <class C, class F>
KILN_HOST_DEVICE bool visit_step(int32_t op, F&& f) {
  namespace pw = pointwise;
  constexpr bool floating = std::is_floating_point_v<C>;
  switch (op) {
    case CAST: f(detail::Copy{}); return true;
    case NEG: f(detail::Unary<pw::Neg>{}); return true;
    case ABS: f(detail::Unary<pw::Abs>{}); return true;
    case RELU: f(detail::Unary<pw::Relu>{}); return true;
    case SIGN: f(detail::Unary<pw::Sign>{}); return true;
    case LOGICAL_NOT: f(detail::Unary<pw::LogicalNot>{}); return true;
    case FLOOR: f(detail::Unary<pw::Floor>{}); return true;
    case CEIL: f(detail::Unary<pw::Ceil>{}); return true;
    case TRUNC: f(detail::Unary<pw::Trunc>{}); return true;
    case ADD: f(detail::Binary<pw::Add>{}); return true;
    case SUB: f(detail::Binary<pw::Sub>{}); return true;
    case MUL: f(detail::Binary<pw::Mul>{}); return true;
    case MAXIMUM: f(detail::Binary<pw::Maximum>{}); return true;
    case MINIMUM: f(detail::Binary<pw::Minimum>{}); return true;
    case EQ: f(detail::Binary<pw::Eq>{}); return true;
    case NE: f(detail::Binary<pw::Ne>{}); return true;
    case LT: f(detail::Binary<pw::Lt>{}); return true;
    case LE: f(detail::Binary<pw::Le>{}); return true;
    case GT: f(detail::Binary<pw::Gt>{}); return true;
    case GE: f(detail::Binary<pw::Ge>{}); return true;
    case LOGICAL_AND: f(detail::Binary<pw::LogicalAnd>{}); return true;
    case LOGICAL_OR: f(detail::Binary<pw::LogicalOr>{}); return true;
    case LOGICAL_XOR: f(detail::Binary<pw::LogicalXor>{}); return true;
    case WHERE: f(detail::Select{}); return true;
    default: break;
  }
  if constexpr (floating) {
    switch (op) {
      case EXP: f(detail::Unary<pw::Exp>{}); return true;
      case LOG: f(detail::Unary<pw::Log>{}); return true;
      case TANH: f(detail::Unary<pw::Tanh>{}); return true;
      case SIGMOID: f(detail::Unary<pw::Sigmoid>{}); return true;
      case GELU: f(detail::GeluErf{}); return true;
      case GELU_TANH: f(detail::GeluTanh{}); return true;
      case SILU: f(detail::Unary<pw::Silu>{}); return true;
      case SQRT: f(detail::Unary<pw::Sqrt>{}); return true;
      case RSQRT: f(detail::Unary<pw::Rsqrt>{}); return true;
      case RECIPROCAL: f(detail::Unary<pw::Reciprocal>{}); return true;
      case LOG1P: f(detail::Unary<pw::Log1p>{}); return true;
      case EXPM1: f(detail::Unary<pw::Expm1>{}); return true;
      case SIN: f(detail::Unary<pw::Sin>{}); return true;
      case COS: f(detail::Unary<pw::Cos>{}); return true;
      case ERF: f(detail::Unary<pw::Erf>{}); return true;
      case DIV: f(detail::Binary<pw::Div>{}); return true;
      case POW: f(detail::Binary<pw::Pow>{}); return true;
      case LEAKY_RELU: f(detail::LeakyRelu{}); return true;
      default: break;
    }
  }
  return false;
}

}  // namespace kiln::sdk::program
