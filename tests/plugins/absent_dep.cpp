// The library missing_dep links. It is built under another SONAME than its file name
// (libkiln_test_absent.so, which exists nowhere), so missing_dep's DT_NEEDED entry names a library
// that the dynamic loader cannot find, exactly as when a system library is not installed.
extern "C" __attribute__((visibility("default"))) int kiln_test_absent_answer(void) { return 42; }
