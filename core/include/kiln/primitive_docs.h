// The part of docs/primitives.md that core writes from its operator entries, so that adding an
// operator needs no edit there. See Note [Generated primitive rows]
// (core/src/ops/primitive_docs.cpp).
#pragma once

#include <kiln/export.h>

#include <string>
#include <vector>

namespace kiln {

// `doc` (the text of docs/primitives.md) with the section between its marker lines replaced by
// the registry's table: the unary elementwise operators, one row per (inputs, outputs, dtypes)
// in declaration order. Throws kiln::ValueError when `doc` lacks either marker.
KILN_API std::string with_generated_primitive_rows(const std::string& doc);

// The names of the operators in that table (the KILN_UNARY entries), in declaration order: each
// is an Operator<Tensor(const Tensor&)>.
KILN_API std::vector<std::string> unary_operator_names();

}  // namespace kiln
