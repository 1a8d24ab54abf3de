// kiln::nn — modules, their functional forms, initialisations and gradient utilities, as
// libtorch's torch/nn.h.
#pragma once

#include <kiln/nn/functional.h>
#include <kiln/nn/functional/rnn.h>
#include <kiln/nn/init.h>
#include <kiln/nn/module.h>
#include <kiln/nn/modules/activation.h>
#include <kiln/nn/modules/adaptive.h>
#include <kiln/nn/modules/any.h>
#include <kiln/nn/modules/collections.h>
#include <kiln/nn/modules/container.h>
#include <kiln/nn/modules/conv.h>
#include <kiln/nn/modules/cross_map_lrn2d.h>
#include <kiln/nn/modules/distance.h>
#include <kiln/nn/modules/dropout.h>
#include <kiln/nn/modules/embedding.h>
#include <kiln/nn/modules/fractional_pooling.h>
#include <kiln/nn/modules/linear.h>
#include <kiln/nn/modules/loss.h>
#include <kiln/nn/modules/normalization.h>
#include <kiln/nn/modules/padding.h>
#include <kiln/nn/modules/pooling.h>
#include <kiln/nn/modules/rnn.h>
#include <kiln/nn/modules/transformer.h>
#include <kiln/nn/modules/upsampling.h>
#include <kiln/nn/utils.h>
#include <kiln/nn/utils/rnn.h>
