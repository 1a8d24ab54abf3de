// Everything a kiln user includes.
#pragma once

#include <kiln/autograd.h>
#include <kiln/device.h>
#include <kiln/dispatch.h>
#include <kiln/dtype.h>
#include <kiln/error.h>
#include <kiln/indexing.h>
#include <kiln/ops.h>
#include <kiln/options.h>
#include <kiln/plugin.h>
#include <kiln/scalar.h>
#include <kiln/tensor.h>
#include <kiln/tensor_data.h>
