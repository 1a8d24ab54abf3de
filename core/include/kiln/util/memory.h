// libtorch's spellings of std::make_unique (torch::make_unique, c10::guts::make_unique): code
// written for C++11 compilers calls them; they are the standard function.
#pragma once

#include <memory>

namespace kiln {
using std::make_unique;
namespace guts {
using std::make_unique;
}  // namespace guts
}  // namespace kiln
