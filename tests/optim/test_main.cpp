// The test_optim executable: optimizers and LR schedulers against PyTorch's goldens, state
// dicts, zero_grad and error paths, one suite per file.
#define BOOST_TEST_MODULE optim
#include <boost/test/unit_test.hpp>
