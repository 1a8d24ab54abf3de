// What a libtorch user adds to port code by renaming: libtorch's namespaces become aliases of
// kiln's, and <kiln/kiln.h> replaces every <torch/...>, <ATen/...> and <c10/...> include.
// The only edit aliases cannot do: a file that reopens `namespace torch {` must say
// `namespace kiln {` (tools/port_check/port_check.py does that rename; docs/porting.md says why).
#pragma once

#include <kiln/kiln.h>

namespace torch = kiln;
namespace at = kiln;
namespace c10 = kiln;

// libtorch's check macro has the same shape as kiln's: a condition, then message parts.
#ifndef TORCH_CHECK
#define TORCH_CHECK KILN_CHECK
#endif
// Its warning macros too: message parts, handed to the thread's kiln::WarningHandler.
#ifndef TORCH_WARN
#define TORCH_WARN KILN_WARN
#endif
#ifndef TORCH_WARN_ONCE
#define TORCH_WARN_ONCE KILN_WARN_ONCE
#endif
// Declaring a module holder and an option: kiln's macros have libtorch's shapes.
#ifndef TORCH_MODULE
#define TORCH_MODULE KILN_MODULE
#endif
#ifndef TORCH_ARG
#define TORCH_ARG KILN_ARG
#endif
