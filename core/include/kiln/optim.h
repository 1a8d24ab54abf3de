// Optimizers and learning-rate schedulers (kiln::optim), as libtorch's torch/optim.h.
#pragma once

#include <kiln/optim/adagrad.h>
#include <kiln/optim/adam.h>
#include <kiln/optim/lbfgs.h>
#include <kiln/optim/lr_scheduler.h>
#include <kiln/optim/optimizer.h>
#include <kiln/optim/rmsprop.h>
#include <kiln/optim/schedulers.h>
#include <kiln/optim/sgd.h>
