// Built against the installed kiln: prints the plugin search path and the devices, and computes a
// small sum on the CPU. It sets no environment variable: libkiln_core finds the installed plugins
// next to itself. Exits non-zero on a failure, and with --expect-cpu when no CPU device was found.
#include <kiln/kiln.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  bool expect_cpu = argc > 1 && std::string(argv[1]) == "--expect-cpu";
  try {
    for (const std::string& dir : kiln::plugin_search_path()) {
      std::cout << "search: " << dir << "\n";
    }
    for (const kiln::Device& d : kiln::devices()) std::cout << "device: " << d << "\n";
    if (!kiln::is_available(kiln::kCPU)) {
      std::cout << "no CPU device\n";
      return expect_cpu ? 1 : 0;
    }
    kiln::Tensor x = kiln::tensor({1.0, 2.0, 3.0});
    float sum = kiln::sum(x * x).item<float>();
    std::cout << "sum of squares: " << sum << "\n";
    return sum == 14.f ? 0 : 1;
  } catch (const kiln::Error& e) {
    std::cerr << "kiln-consumer: " << e.what() << "\n";
    return 1;
  }
}
