// A real shared library that exports none of the kiln_plugin_* functions.
extern "C" __attribute__((visibility("default"))) int kiln_test_not_a_plugin(void) { return 1; }
