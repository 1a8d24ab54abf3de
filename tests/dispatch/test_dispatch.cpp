// The dispatcher's three layers with test kernels: order, fallthrough, exclusion and inclusion
// guards (restored on exceptions), thread-locality.
#define BOOST_TEST_MODULE dispatch
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using kiln::DispatchKey;
using kiln::Tensor;
using TestOp = kiln::Operator<Tensor(const Tensor&)>;

namespace {

thread_local std::vector<std::string> trace;

Tensor backend(const TestOp&, const Tensor& x) {
  trace.push_back("backend");
  return x;
}

TestOp test_op("test::identity", "test::identity(Tensor self) -> Tensor", backend, false);

Tensor autograd_layer(const TestOp& op, const Tensor& x) {
  trace.push_back("autograd");
  kiln::ExcludeDispatchKeyGuard guard(DispatchKey::Autograd);
  return op(x);
}

Tensor autocast_layer(const TestOp& op, const Tensor& x) {
  trace.push_back("autocast");
  kiln::ExcludeDispatchKeyGuard guard(DispatchKey::Autocast);
  return op(x);
}

Tensor throwing_layer(const TestOp&, const Tensor&) {
  trace.push_back("throwing");
  kiln::ExcludeDispatchKeyGuard guard(DispatchKey::Autograd);
  throw kiln::ValueError("test::identity: failure inside the autograd layer");
}

// Enables "autocast" for a device type in this thread's state, for a scope.
struct AutocastOn {
  explicit AutocastOn(kiln::DeviceType t) : saved(kiln::detail::local_dispatch_state()) {
    kiln::detail::local_dispatch_state().autocast_device_types |= 1u << t;
  }
  ~AutocastOn() { kiln::detail::local_dispatch_state() = saved; }
  kiln::detail::LocalDispatchState saved;
};

Tensor grad_tensor() { return kiln::zeros({2}).requires_grad_(); }

struct Fixture {
  Fixture() { trace.clear(); }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(dispatch, Fixture)

BOOST_AUTO_TEST_CASE(without_layer_kernels_every_layer_falls_through) {
  test_op(grad_tensor());
  AutocastOn on(kiln::kCPU);
  test_op(grad_tensor());
  BOOST_TEST(trace == std::vector<std::string>({"backend", "backend"}));
  BOOST_TEST(!test_op.has_layer(DispatchKey::Autograd));
}

BOOST_AUTO_TEST_CASE(layers_run_autocast_then_autograd_then_backend) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  kiln::ScopedKernel<TestOp> c(test_op, DispatchKey::Autocast, autocast_layer);
  AutocastOn on(kiln::kCPU);
  test_op(grad_tensor());
  BOOST_TEST(trace == std::vector<std::string>({"autocast", "autograd", "backend"}));
}

// The Observe layer (profiler, graph capture) sits below Autocast and Autograd: a call reaches
// it once, after both, and it calls the Backend directly. Off, its kernel is never reached.
BOOST_AUTO_TEST_CASE(observe_layer_sees_a_call_once_below_autocast_and_autograd) {
  BOOST_TEST(test_op.has_layer(DispatchKey::Observe));
  BOOST_TEST(std::string(kiln::dispatch_key_name(DispatchKey::Observe)) == "Observe");
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  kiln::ScopedKernel<TestOp> c(test_op, DispatchKey::Autocast, autocast_layer);
  AutocastOn on(kiln::kCPU);
  Tensor x = grad_tensor();
  kiln::profiler::Profile prof;
  test_op(x);
  int calls = 0;
  for (const auto& e : prof.events()) calls += e.name == "test::identity";
  BOOST_TEST(calls == 1);
  BOOST_TEST(trace == std::vector<std::string>({"autocast", "autograd", "backend"}));
  // off again: no key set, nothing recorded
  BOOST_TEST(!kiln::profiler::is_profiling());
  BOOST_TEST(!kiln::impl::tls_is_dispatch_key_included(DispatchKey::Observe));
}

BOOST_AUTO_TEST_CASE(autograd_layer_only_for_tensors_that_require_grad) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  test_op(kiln::zeros({2}));
  BOOST_TEST(trace == std::vector<std::string>({"backend"}));
  trace.clear();
  test_op(grad_tensor());
  BOOST_TEST(trace == std::vector<std::string>({"autograd", "backend"}));
}

BOOST_AUTO_TEST_CASE(autocast_layer_only_for_the_enabled_device_type) {
  kiln::ScopedKernel<TestOp> c(test_op, DispatchKey::Autocast, autocast_layer);
  {
    AutocastOn on(kiln::kCUDA);  // a different device type than the tensor's
    test_op(kiln::zeros({2}));
  }
  BOOST_TEST(trace == std::vector<std::string>({"backend"}));
  trace.clear();
  AutocastOn on(kiln::kCPU);
  test_op(kiln::zeros({2}));
  BOOST_TEST(trace == std::vector<std::string>({"autocast", "backend"}));
}

BOOST_AUTO_TEST_CASE(excluded_key_skips_its_layer_and_guard_restores_it) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  {
    kiln::ExcludeDispatchKeyGuard no_grad(DispatchKey::Autograd);
    test_op(grad_tensor());
  }
  test_op(grad_tensor());
  BOOST_TEST(trace == std::vector<std::string>({"backend", "autograd", "backend"}));
  BOOST_TEST(kiln::detail::local_dispatch_state().excluded == 0);
}

BOOST_AUTO_TEST_CASE(included_key_activates_a_layer_without_tensor_keys) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  kiln::IncludeDispatchKeyGuard include(DispatchKey::Autograd);
  test_op(kiln::zeros({2}));
  BOOST_TEST(trace == std::vector<std::string>({"autograd", "backend"}));
}

BOOST_AUTO_TEST_CASE(exclusion_wins_over_inclusion) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  kiln::IncludeDispatchKeyGuard include(DispatchKey::Autograd);
  kiln::ExcludeDispatchKeyGuard exclude(DispatchKey::Autograd);
  test_op(grad_tensor());
  BOOST_TEST(trace == std::vector<std::string>({"backend"}));
}

BOOST_AUTO_TEST_CASE(guards_are_restored_when_a_layer_throws) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, throwing_layer);
  BOOST_CHECK_THROW(test_op(grad_tensor()), kiln::ValueError);
  BOOST_TEST(kiln::detail::local_dispatch_state().excluded == 0);
  BOOST_CHECK_THROW(test_op(grad_tensor()), kiln::ValueError);
  BOOST_TEST(trace == std::vector<std::string>({"throwing", "throwing"}));
}

BOOST_AUTO_TEST_CASE(dispatch_state_is_thread_local) {
  kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
  kiln::ExcludeDispatchKeyGuard no_grad(DispatchKey::Autograd);
  AutocastOn on(kiln::kCPU);
  std::vector<std::string> other_trace;
  uint8_t other_excluded = 0xff;
  uint32_t other_autocast = 0xff;
  Tensor x = grad_tensor();
  std::thread worker([&] {
    other_excluded = kiln::detail::local_dispatch_state().excluded;
    other_autocast = kiln::detail::local_dispatch_state().autocast_device_types;
    test_op(x);
    other_trace = trace;
  });
  worker.join();
  BOOST_TEST(other_excluded == 0);
  BOOST_TEST(other_autocast == 0u);
  BOOST_TEST(other_trace == std::vector<std::string>({"autograd", "backend"}));
  test_op(x);
  BOOST_TEST(trace == std::vector<std::string>({"backend"}));
}

BOOST_AUTO_TEST_CASE(scoped_kernel_restores_the_previous_kernel) {
  {
    kiln::ScopedKernel<TestOp> a(test_op, DispatchKey::Autograd, autograd_layer);
    BOOST_TEST(test_op.has_layer(DispatchKey::Autograd));
    kiln::ScopedKernel<TestOp> b(test_op, DispatchKey::Autograd, throwing_layer);
    BOOST_TEST(test_op.kernel(DispatchKey::Autograd) == &throwing_layer);
  }
  BOOST_TEST(!test_op.has_layer(DispatchKey::Autograd));
}

BOOST_AUTO_TEST_CASE(backend_layer_cannot_be_removed) {
  BOOST_CHECK_EXCEPTION(test_op.set_kernel(DispatchKey::Backend, nullptr), kiln::Error,
                        [](const kiln::Error& e) {
                          return std::string(e.what()).find("test::identity: the Backend layer") ==
                                 0;
                        });
}

BOOST_AUTO_TEST_CASE(operators_are_registered_by_name) {
  kiln::OperatorBase* add = kiln::find_operator("add");
  BOOST_REQUIRE(add != nullptr);
  BOOST_TEST(add->is_primitive());
  BOOST_TEST(std::string(add->schema()).find("add(Tensor self") == 0);
  BOOST_TEST(kiln::find_operator("test::identity") == &test_op);
  BOOST_TEST(!kiln::find_operator("matmul_typo"));
  BOOST_TEST(kiln::find_operator("add_")->functional() == add);
  bool listed = false;
  for (kiln::OperatorBase* op : kiln::all_operators()) listed = listed || op == &test_op;
  BOOST_TEST(listed);
}

BOOST_AUTO_TEST_CASE(real_operators_reach_the_plugin_kernel) {
  Tensor a = kiln::tensor({1.0, 2.0});
  Tensor b = kiln::tensor({10.0, 20.0});
  BOOST_TEST((a + b).equal(kiln::tensor({11.0, 22.0})));
  BOOST_TEST(kiln::find_operator("add")->has_plugin_kernel(kiln::kCPU));
}

BOOST_AUTO_TEST_SUITE_END()
