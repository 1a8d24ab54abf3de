// In-place operations on views of tensors that require grad (See Note [In-place on views] in
// core/src/autograd/inplace_view.cpp): the base's gradient sees the change, checked against
// finite differences here (PyTorch's values are in tests/golden/grad_cases.txt, inplace_*).
#include <kiln/gradcheck.h>
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

using kiln::Tensor;
using Inputs = std::vector<Tensor>;

BOOST_AUTO_TEST_SUITE(inplace_view)

BOOST_AUTO_TEST_CASE(row_update_reaches_the_base) {
  Tensor x = kiln::ones({3, 4}).requires_grad_();
  Tensor b = x * 1;
  b[1].mul_(3);
  BOOST_CHECK(b.grad_fn() != nullptr);
  BOOST_CHECK_EQUAL(b.grad_fn()->name(), "CopySlices");
  b.sum().backward();
  Tensor want = kiln::ones({3, 4});
  want[1].fill_(3);
  BOOST_CHECK(x.grad().equal(want));
}

BOOST_AUTO_TEST_CASE(views_taken_before_an_inplace_change_see_it) {
  Tensor x = kiln::ones({3, 4}).requires_grad_();
  Tensor b = x * 1;
  Tensor row = b[0];
  Tensor column = b.select(1, 0);
  b.mul_(2);                                      // through the base
  row.sum().backward({}, /*retain_graph=*/true);  // row's history is regenerated
  Tensor want = kiln::zeros({3, 4});
  want[0].fill_(2);
  BOOST_CHECK(x.grad().equal(want));
  x.mutable_grad() = Tensor();
  row.mul_(3);  // through another view
  column.sum().backward();
  want = kiln::zeros({3, 4});
  want.select(1, 0).fill_(2);
  want[0][0].fill_(6);
  BOOST_CHECK(x.grad().equal(want));
}

BOOST_AUTO_TEST_CASE(view_of_a_leaf_is_refused) {
  Tensor x = kiln::ones({3, 4}).requires_grad_();
  BOOST_CHECK_EXCEPTION(x.narrow(0, 0, 1).add_(1), kiln::Error, [](const kiln::Error& e) {
    return std::string(e.what()).find("a view of a leaf Variable that requires grad is being "
                                      "used in an in-place operation") != std::string::npos;
  });
  kiln::NoGradGuard no_grad;
  x.narrow(0, 0, 1).add_(1);  // allowed without grad mode, as in PyTorch
  BOOST_CHECK_EQUAL(x.sum().item<float>(), 16.0f);
}

BOOST_AUTO_TEST_CASE(first_and_second_derivatives_by_finite_differences) {
  kiln::manual_seed(3);
  Inputs in = {kiln::rand({3, 4}, kiln::kDouble).requires_grad_(),
               kiln::rand({2}, kiln::kDouble).requires_grad_(),
               kiln::rand({3, 2}, kiln::kDouble).requires_grad_()};
  kiln::autograd::Fn fn = [](const Inputs& x) {
    Tensor b = x[0] * x[0];
    Tensor row = b[0];
    row.narrow(0, 1, 2).mul_(x[1]);       // a view of a view
    b.slice(1, 0, 4, 2).add_(x[2], 0.5);  // a strided view
    b.t()[3].copy_(x[2].sum(1));          // copy_ into a transposed view
    return Inputs{b * x[0]};
  };
  BOOST_TEST(kiln::autograd::gradcheck(fn, in));
  BOOST_TEST(kiln::autograd::gradgradcheck(fn, in));
}

BOOST_AUTO_TEST_SUITE_END()
