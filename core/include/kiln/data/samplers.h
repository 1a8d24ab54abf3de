// The libtorch-shaped samplers that make_data_loader takes (namespace kiln::data::samplers).
#pragma once

#include <kiln/data/samplers/base.h>
#include <kiln/data/samplers/custom_batch_request.h>
#include <kiln/data/samplers/distributed.h>
#include <kiln/data/samplers/random.h>
#include <kiln/data/samplers/sequential.h>
#include <kiln/data/samplers/stream.h>
