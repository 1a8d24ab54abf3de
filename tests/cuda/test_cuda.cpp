// What the conformance suite does not reach on the CUDA device: reductions large enough to be
// split across blocks, strided copies to and from the host, errors found on the device, the
// allocator's statistics in the device's description, random numbers equal to the CPU's, a
// matrix product of transposed views. Each case needs a usable cuda:0; without one it is skipped
// and Boost.Test prints why (the plugin's reason, from kiln-info's data).
#define BOOST_TEST_MODULE cuda
#include <boost/test/unit_test.hpp>

#include <kiln/kiln.h>

#include <string>

namespace {

std::string cuda_unavailable_reason() {
  kiln::load_plugins();
  for (const kiln::PluginInfo& p : kiln::plugins()) {
    if (p.name != "cuda") continue;
    if (p.state == kiln::PluginState::Loaded) {
      return kiln::is_available(kiln::device_type_from_name("cuda")) ? "" : "no cuda device";
    }
    return std::string("the CUDA plugin is ") + kiln::plugin_state_name(p.state) + ": " + p.reason;
  }
  return "no CUDA plugin was found";
}

struct CudaAvailable {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    static const std::string reason = cuda_unavailable_reason();
    boost::test_tools::assertion_result r(reason.empty());
    r.message() << reason;
    return r;
  }
};

const kiln::Device kCuda("cuda:0");

}  // namespace

BOOST_AUTO_TEST_SUITE(cuda, *boost::unit_test::precondition(CudaAvailable()))

BOOST_AUTO_TEST_CASE(split_reductions_match_the_cpu) {
  kiln::manual_seed(1);
  kiln::Tensor x = kiln::rand({3, 1 << 20});  // few outputs, many elements each: two passes
  kiln::Tensor g = x.to(kCuda);
  BOOST_TEST(kiln::allclose(g.sum({1}).cpu(), x.sum({1}), 1e-5, 1e-3));
  BOOST_TEST(kiln::equal(kiln::amax(g, {1}).cpu(), kiln::amax(x, {1})));
  BOOST_TEST(kiln::allclose(g.sum({0}).cpu(), x.sum({0}), 1e-5, 1e-5));  // many outputs
  BOOST_TEST(g.sum().item<double>() == x.sum().item<double>(), boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(strided_copies_round_trip) {
  kiln::Tensor x = kiln::arange(0, 24, kiln::TensorOptions().dtype(kiln::kFloat)).view({4, 6});
  kiln::Tensor t = x.t();  // a strided host view
  kiln::Tensor g = t.to(kCuda);
  BOOST_TEST(kiln::equal(g.cpu(), t));
  BOOST_TEST(kiln::equal(g.t().cpu(), x));  // strided device view to the host
  BOOST_TEST(kiln::equal(g.to(kiln::kHalf).cpu(), t.to(kiln::kHalf)));  // cast on the device
}

BOOST_AUTO_TEST_CASE(device_errors_are_raised) {
  auto ints = kiln::TensorOptions().dtype(kiln::kLong).device(kCuda);
  kiln::Tensor a = kiln::ones({4}, ints), zero = kiln::zeros({4}, ints);
  BOOST_CHECK_THROW(kiln::floor_divide(a, zero).cpu(), kiln::Error);
  BOOST_TEST(kiln::equal(kiln::floor_divide(a, a).cpu(), kiln::ones({4}, kiln::kLong)));
  kiln::Tensor index = kiln::full({2}, 7, ints);
  BOOST_CHECK_THROW(kiln::ones({3}, kiln::TensorOptions().device(kCuda)).index_select(0, index),
                    kiln::Error);
}

BOOST_AUTO_TEST_CASE(random_numbers_equal_the_cpu) {
  kiln::manual_seed(7);
  kiln::Tensor c = kiln::randn({1000});
  kiln::manual_seed(7);
  kiln::Tensor g = kiln::randn({1000}, kiln::TensorOptions().device(kCuda));
  BOOST_TEST(kiln::allclose(g.cpu(), c, 0, 0));
}

BOOST_AUTO_TEST_CASE(matmul_of_transposed_views) {
  kiln::manual_seed(3);
  kiln::Tensor a = kiln::randn({64, 32}), b = kiln::randn({48, 64});
  kiln::Tensor expected = a.t().matmul(b.t());
  kiln::Tensor got = a.to(kCuda).t().matmul(b.to(kCuda).t()).cpu();
  BOOST_TEST(kiln::allclose(got, expected, 1e-4, 1e-4));
}

BOOST_AUTO_TEST_CASE(allocator_statistics_in_the_description) {
  { kiln::Tensor x = kiln::empty({1 << 10}, kiln::TensorOptions().device(kCuda)); }
  std::string text = kiln::device_description(kCuda);
  BOOST_TEST(text.find("compute capability") != std::string::npos, text);
  BOOST_TEST(text.find("MiB reserved") != std::string::npos, text);
}

BOOST_AUTO_TEST_SUITE_END()
