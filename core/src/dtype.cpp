#include <kiln/dtype.h>
#include <kiln/error.h>
#include <kiln/scalar.h>

#include <atomic>

namespace kiln {
namespace {
std::atomic<ScalarType> g_default_float_dtype{kFloat};
}  // namespace

ScalarType default_float_dtype() { return g_default_float_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(TypeMeta dtype) {
  ScalarType t = dtype.toScalarType();
  KILN_CHECK_TYPE(is_floating_point(t), "set_default_dtype: only floating-point types are ",
                  "supported as the default type (got ", dtype_name(t), ")");
  g_default_float_dtype.store(t, std::memory_order_relaxed);
}

TypeMeta get_default_dtype() { return TypeMeta::fromScalarType(default_float_dtype()); }

const char* dtype_name(ScalarType t) {
  static const char* const names[kNumScalarTypes] = {"bool",    "uint8",  "int8",    "int16",
                                                     "int32",   "int64",  "float16", "bfloat16",
                                                     "float32", "float64"};
  return names[static_cast<int>(t)];
}

std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << dtype_name(t); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  // PyTorch's table (c10/core/ScalarType.cpp), rows and columns in ScalarType order:
  // b1 u1 i1 i2 i4 i8 f2 bf f4 f8.
  constexpr ScalarType b1 = kBool, u1 = kByte, i1 = kChar, i2 = kShort, i4 = kInt, i8 = kLong,
                       f2 = kHalf, bf = kBFloat16, f4 = kFloat, f8 = kDouble;
  static const ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

void Scalar::overflow(const char* type) const {
  throw ValueError(detail::str("value cannot be converted to type ", type, " without overflow: ",
                               *this, " (Scalar::to; check the value's range first)"));
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  if (s.is_bool()) return out << (s.to_bool() ? "True" : "False");
  if (s.is_floating_point()) return out << s.to_double();
  return out << s.to_long();
}

}  // namespace kiln
