// The libtorch-shaped datasets that make_data_loader takes (namespace kiln::data::datasets).
#pragma once

#include <kiln/data/datasets/base.h>
#include <kiln/data/datasets/chunk.h>
#include <kiln/data/datasets/map.h>
#include <kiln/data/datasets/shared.h>
#include <kiln/data/datasets/stateful.h>
#include <kiln/data/datasets/tensor.h>
