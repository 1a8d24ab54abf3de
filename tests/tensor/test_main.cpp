// The test_tensor executable: tensor semantics (promotion, broadcasting, views, factories,
// basics, errors), one suite per file.
#define BOOST_TEST_MODULE tensor
#include <boost/test/unit_test.hpp>
