// Helpers of the mixed-precision tests.
#pragma once

#include <kiln/amp.h>
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <string>

namespace amp_test {

// Runs f, expecting an exception of type E whose message contains every one of `parts`.
template <class E, class F>
void check_error(F&& f, std::initializer_list<std::string> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    std::string what = e.what();
    for (const std::string& part : parts) {
      BOOST_CHECK_MESSAGE(what.find(part) != std::string::npos,
                          "message \"" << what << "\" lacks \"" << part << "\"");
    }
  }
  BOOST_CHECK_MESSAGE(thrown, "no exception thrown");
}

}  // namespace amp_test
