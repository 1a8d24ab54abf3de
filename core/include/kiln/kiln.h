// Everything a kiln user includes, as libtorch's torch/torch.h: tensors and operators,
// autograd, devices and plugins, nn, optim, amp, data and serialize, and the utilities
// libtorch code uses (irange, str, warnings, temporary files).
#pragma once

#include <kiln/amp.h>
#include <kiln/autograd.h>
#include <kiln/custom_function.h>
#include <kiln/data/data.h>
#include <kiln/device.h>
#include <kiln/dispatch.h>
#include <kiln/distributed.h>
#include <kiln/dtype.h>
#include <kiln/error.h>
#include <kiln/expanding_array.h>
#include <kiln/gradcheck.h>
#include <kiln/indexing.h>
#include <kiln/jit.h>
#include <kiln/nn.h>
#include <kiln/nn/parallel/distributed.h>
#include <kiln/ops.h>
#include <kiln/optim.h>
#include <kiln/options.h>
#include <kiln/plugin.h>
#include <kiln/profiler.h>
#include <kiln/sampling.h>
#include <kiln/scalar.h>
#include <kiln/serialize.h>
#include <kiln/tensor.h>
#include <kiln/tensor_data.h>
#include <kiln/util/irange.h>
#include <kiln/util/memory.h>
#include <kiln/util/optional_array_ref.h>
#include <kiln/util/string.h>
#include <kiln/util/tempfile.h>
#include <kiln/variable.h>
#include <kiln/warning.h>
