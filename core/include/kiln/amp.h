// Automatic mixed precision: autocast regions, GradScaler, custom_fwd/custom_bwd.
#pragma once

#include <kiln/amp/autocast.h>
#include <kiln/amp/custom_function.h>
#include <kiln/amp/grad_scaler.h>
