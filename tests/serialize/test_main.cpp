// The test_serialize executable: safetensors save and load (round trips, corrupt files, interop
// with PyTorch's side, the header's JSON), one suite per file.
#define BOOST_TEST_MODULE serialize
#include <boost/test/unit_test.hpp>
