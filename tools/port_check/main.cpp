// The gtest main linked into every case port_check runs: it loads kiln's plugins first and
// refuses to run when no CPU device loaded, so that a missing plugin reads as a setup error
// instead of as failing cases.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kiln::load_plugins();
  if (!kiln::is_available(kiln::kCPU)) {
    std::fprintf(stderr, "port_check: no kiln CPU device loaded; check KILN_PLUGIN_PATH "
                         "(kiln-info lists the plugins and why each did not load)\n");
    return 2;
  }
  return RUN_ALL_TESTS();
}
