// kiln::nn::utils — gradient clipping, as torch::nn::utils.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <vector>

namespace kiln::nn::utils {

// Scales the gradients of `parameters` in place so that their total norm (the norm_type norm of
// all gradients seen as one vector; inf for the largest magnitude) is at most max_norm, and
// returns the total norm before clipping. Parameters without a gradient are skipped. A
// non-finite total norm raises an error when error_if_nonfinite.
KILN_API double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                                double norm_type = 2.0, bool error_if_nonfinite = false);
KILN_API double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm,
                                double norm_type = 2.0, bool error_if_nonfinite = false);
KILN_API double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                                bool error_if_nonfinite = false);
// Clamps every gradient of `parameters` to [-clip_value, clip_value] in place.
KILN_API void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
KILN_API void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
KILN_API void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace kiln::nn::utils
