// Note [Generated primitive rows]: docs/primitives.md lists every primitive a device provides
// (tests/conformance/runner.cpp holds it to the registry). The unary elementwise operators are
// the family that grows most and whose rows say nothing an entry does not: inputs, outputs and
// dtypes follow from the entry's UnaryRule. So each KILN_UNARY entry records its rule's columns
// here (PrimitiveRow), and their table is written from the registry between two marker lines of
// the doc: every build of the `kiln_primitives_doc` target (part of `all`, and a dependency of
// test_conformance) runs `kiln-info --update-primitives-doc docs/primitives.md`, which rewrites
// the file only when the table changed. The doc stays committed, reviewed in the diff and
// greppable, and nobody edits those rows by hand: adding an operator changes them by itself. The
// coverage test `primitives_md_rows_are_generated` fails when the committed rows are stale (a
// build that skipped the target), and .ci/run fails when a build changed the committed file.
#include "operator_entry.h"

#include <kiln/error.h>
#include <kiln/primitive_docs.h>

#include <utility>
#include <vector>

namespace kiln {
namespace detail {
namespace {

struct Row {
  std::string names;    // `exp` `log` ...
  std::string columns;  // the rest of the row
};

// (operator name, columns) in declaration order
std::vector<std::pair<const char*, const char*>>& unary_rows() {
  static std::vector<std::pair<const char*, const char*>> rows;
  return rows;
}

constexpr const char* kBegin =
    "<!-- generated from the KILN_UNARY entries (core/src/ops/unary.cpp) by kiln-info "
    "--update-primitives-doc: every build rewrites what follows; do not edit it -->";
constexpr const char* kEnd = "<!-- end of the generated rows -->";

std::string unary_table() {
  std::vector<Row> rows;
  for (const auto& [name, columns] : unary_rows()) {
    Row* row = nullptr;
    for (Row& r : rows) {
      if (r.columns == columns) row = &r;
    }
    if (row == nullptr) row = &rows.emplace_back(Row{"", columns});
    row->names += (row->names.empty() ? "`" : " `") + std::string(name) + "`";
  }
  std::string out = "| operator | inputs | outputs | attributes | dtypes (T) | notes |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const Row& r : rows) out += "| " + r.names + " | " + r.columns + " |\n";
  return out;
}

}  // namespace

PrimitiveRow::PrimitiveRow(const OperatorBase& op, const char* columns) {
  unary_rows().emplace_back(op.name(), columns);
}

}  // namespace detail

std::string with_generated_primitive_rows(const std::string& doc) {
  const size_t begin = doc.find(detail::kBegin);
  const size_t end = doc.find(detail::kEnd);
  KILN_CHECK_VALUE(begin != std::string::npos && end != std::string::npos && begin < end,
                   "with_generated_primitive_rows: the text has no line \"", detail::kBegin,
                   "\" followed by a line \"", detail::kEnd,
                   "\": pass docs/primitives.md, which has them around the unary table");
  const size_t first = begin + std::string(detail::kBegin).size() + 1;  // after the newline
  return doc.substr(0, first) + detail::unary_table() + doc.substr(end);
}

std::vector<std::string> unary_operator_names() {
  std::vector<std::string> names;
  for (const auto& row : detail::unary_rows()) names.emplace_back(row.first);
  return names;
}

}  // namespace kiln
