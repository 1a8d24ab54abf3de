// The curve fit of "Effective PyTorch" (f(x) = 5x^2 + 3, g(x, w) = w0 x^2 + w1 x + w2, Adam with lr
// 0.1) on PyTorch's recorded batches: kiln's forward, backward and Adam step give PyTorch's losses.
#include "optim_golden.h"
#include "optim_test.h"

#include <kiln/nn.h>
#include <kiln/optim.h>

using namespace kiln;
using namespace kiln::optim;
using namespace optim_test;

BOOST_AUTO_TEST_SUITE(curve_fit)

BOOST_AUTO_TEST_CASE(loss_trajectory_matches_pytorch) {
  const CurveFitCase& c = golden().curve_fit;
  BOOST_REQUIRE_EQUAL(c.x.size(), static_cast<size_t>(c.steps));
  Tensor w = tensor_of({3, 1}, c.w0).requires_grad_();
  Adam opt({w}, AdamOptions(c.lr));
  FloatDiff loss_diff;
  loss_diff.rtol = 1e-5;
  for (int s = 0; s < c.steps; ++s) {
    Tensor x = tensor_of({c.batch}, c.x[static_cast<size_t>(s)]);
    Tensor y = 5 * x * x + 3;
    Tensor f = stack({x * x, x, ones_like(x)}, 1);
    Tensor yhat = squeeze(f.matmul(w), 1);
    Tensor loss = nn::functional::mse_loss(yhat, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_diff.check("loss of step " + std::to_string(s), {loss.item<double>()},
                    {c.loss[static_cast<size_t>(s)]});
  }
  FloatDiff w_diff;
  w_diff.rtol = 1e-5;
  w_diff.check("final w", values_of(w), c.w);
  BOOST_TEST_MESSAGE("curve fit losses: " << loss_diff.summary() << "; w: " << w_diff.summary());
}

BOOST_AUTO_TEST_SUITE_END()
