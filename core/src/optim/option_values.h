// Reading an options class from OptionValues (state_dict's group options), with messages that
// name the missing or unknown option.
#pragma once

#include <kiln/error.h>
#include <kiln/optim/optimizer.h>

#include <initializer_list>
#include <string>
#include <utility>

namespace kiln::optim::internal {

// One option: its name and where it is stored (a double, or a bool read as nonzero).
struct OptionField {
  const char* name;
  double* number = nullptr;
  bool* flag = nullptr;
};

// Sets every field from values; throws ValueError for a missing or unknown name (who: the
// options class, for the message).
inline void read_options(const char* who, const OptionValues& values,
                         std::initializer_list<OptionField> fields) {
  for (const auto& [key, value] : values) {
    bool known = false;
    for (const OptionField& f : fields) known = known || key == f.name;
    KILN_CHECK_VALUE(known, who, ": unknown option '", key, "'");
  }
  for (const OptionField& f : fields) {
    auto it = values.find(f.name);
    KILN_CHECK_VALUE(it != values.end(), who, ": missing option '", f.name, "'");
    if (f.number) *f.number = it->second;
    if (f.flag) *f.flag = it->second != 0;
  }
}

}  // namespace kiln::optim::internal
