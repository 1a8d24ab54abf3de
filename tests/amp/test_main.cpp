// The test_amp executable: autocast, custom functions and GradScaler, one suite per file.
#define BOOST_TEST_MODULE amp
#include <boost/test/unit_test.hpp>
