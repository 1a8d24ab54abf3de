// kiln-demo --tour: the tensor examples of "Effective PyTorch": "PyTorch basics", "Broadcasting the
// good and the ugly" and "Take advantage of the overloaded operators", printing what the article
// prints.
#include "demo.h"

#include <kiln/kiln.h>

#include <chrono>
#include <iostream>

namespace {

using kiln::Tensor;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void section(const char* title) { std::cout << "\n=== " << title << " ===\n"; }

void basics(kiln::Device dev) {
  section("PyTorch basics");
  Tensor a = kiln::tensor(3, dev);
  std::cout << "a = kiln::tensor(3)              -> " << a << "\n";
  Tensor b = kiln::tensor({1, 2}, dev);
  std::cout << "b = kiln::tensor({1, 2})         -> " << b << "\n";
  Tensor c = kiln::zeros({2, 2}, dev);
  std::cout << "c = kiln::zeros({2, 2})          -> " << c << "\n";
  Tensor d = kiln::rand({2, 2, 2}, dev);
  std::cout << "d = kiln::rand({2, 2, 2}) has sizes " << d.sizes() << "\n";
  kiln::manual_seed(0);
  Tensor x = kiln::randn({3, 5}, dev);
  Tensor y = kiln::randn({5, 4}, dev);
  Tensor z = x.matmul(y);
  std::cout << "z = x.matmul(y) for x [3, 5], y [5, 4]:\n" << z << "\n";
  std::cout << "x + x:\n" << x + x << "\n";
}

void broadcasting(kiln::Device dev) {
  section("Broadcasting the good and the ugly");
  Tensor a = kiln::tensor({{1., 2.}, {3., 4.}}, dev);
  Tensor b = kiln::tensor({{1.}, {2.}}, dev);
  std::cout << "a + b (b broadcast along columns):\n" << a + b << "\n";

  Tensor a3 = kiln::rand({5, 3, 5}, dev);
  Tensor b3 = kiln::rand({5, 1, 6}, dev);
  Tensor w = kiln::randn({10, 11}, dev);
  Tensor bias = kiln::randn({10}, dev);
  Tensor tiled_b = b3.repeat({1, 3, 1});
  Tensor cat = kiln::cat({a3, tiled_b}, 2);
  Tensor d = kiln::relu(cat.matmul(w.t()) + bias);
  std::cout << "tiled and concatenated, then linear + relu: sizes " << d.sizes() << "\n";
  // the same without tiling: split the weights and let broadcasting do the concatenation
  Tensor w1 = w.narrow(1, 0, 5), w2 = w.narrow(1, 5, 6);
  Tensor d2 = kiln::relu(a3.matmul(w1.t()) + b3.matmul(w2.t()) + bias);
  std::cout << "with broadcasting instead: sizes " << d2.sizes()
            << ", same values: " << (d.allclose(d2, 1e-4, 1e-5) ? "yes" : "no") << "\n";

  Tensor u = kiln::tensor({{1.}, {2.}}, dev);
  Tensor v = kiln::tensor({1., 2.}, dev);
  std::cout << "the ugly part: kiln::sum(a + b) for a [2, 1] and b [2] -> " << kiln::sum(u + v)
            << "\n";
  std::cout << "kiln::sum(a + b, 0) -> " << kiln::sum(u + v, 0) << "\n";
}

void overloaded_operators(kiln::Device dev, bool quick) {
  section("Take advantage of the overloaded operators");
  Tensor x = kiln::rand({500, 10}, dev);
  int repeats = quick ? 1 : 20;

  auto time = [&](const char* what, auto&& body) {
    Tensor z;
    auto start = Clock::now();
    for (int r = 0; r < repeats; ++r) z = body();
    std::cout << what << ": " << seconds_since(start) / repeats * 1e3 << " ms\n";
    return z;
  };
  Tensor z1 = time("z += x[i] over 500 rows   ", [&] {
    Tensor z = kiln::zeros({10}, dev);
    for (int64_t i = 0; i < 500; ++i) z += x[i];
    return z;
  });
  Tensor z2 = time("z += x_i over unbind(x)   ", [&] {
    Tensor z = kiln::zeros({10}, dev);
    for (const Tensor& xi : x.unbind()) z += xi;
    return z;
  });
  Tensor z3 = time("kiln::sum(x, 0)           ", [&] { return kiln::sum(x, 0); });
  bool agree = z1.allclose(z3, 1e-4) && z2.allclose(z3, 1e-4);
  std::cout << "all three agree: " << (agree ? "yes" : "no") << "\n";

  Tensor p = kiln::tensor({{1., -2.}, {3., 4.}}, dev);
  Tensor q = kiln::tensor({{2., 2.}, {-2., 3.}}, dev);
  std::cout << "-p = " << -p << "\n";
  std::cout << "p + q = " << p + q << "\n";
  std::cout << "p - q = " << p - q << "\n";
  std::cout << "p * q = " << p * q << "\n";
  std::cout << "p / q = " << p / q << "\n";
  std::cout << "floor_divide(p, q) = " << kiln::floor_divide(p, q) << "\n";
  std::cout << "p % q = " << p % q << "\n";
  std::cout << "pow(p, q) = " << kiln::pow(p, q) << "\n";
  std::cout << "p.matmul(q) = " << p.matmul(q) << "\n";
  std::cout << "p > q = " << (p > q) << "\n";
  std::cout << "abs(p) = " << kiln::abs(p) << "\n";
  Tensor m = p > 0, n = q > 0;
  std::cout << "m & n = " << (m & n) << "\n";
  std::cout << "m | n = " << (m | n) << "\n";
  std::cout << "m ^ n = " << (m ^ n) << "\n";
  std::cout << "~m = " << ~m << "\n";
  std::cout << "p == q = " << (p == q) << "\n";
  std::cout << "p != q = " << (p != q) << "\n";
}

}  // namespace

void run_tour(kiln::Device dev, bool quick) {
  basics(dev);
  broadcasting(dev);
  overloaded_operators(dev, quick);
}
