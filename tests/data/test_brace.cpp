// expand_braces on outside text: ranges at the int64 limits and with any step, and caps on what
// a pattern may expand to. (The braceexpand cases are in test_tar_source.cpp.)
#include "data_test.h"

#include <limits>

using namespace kiln::data;
using Names = std::vector<std::string>;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(brace_expansion)

BOOST_AUTO_TEST_CASE(a_step_past_the_range_gives_its_first_item) {
  // the step used to be cast to int (0 here): the loop never ended
  BOOST_TEST(expand_braces("{a..z..4294967296}") == Names{"a"});
  BOOST_TEST(expand_braces("{0..10..-9223372036854775808}") == Names{"0"});
  BOOST_TEST(expand_braces("{z..a..-12}") == (Names{"z", "n", "b"}));
  BOOST_TEST(expand_braces("{1..2..+1}") == (Names{"1", "2"}));
  BOOST_TEST(expand_braces("{1..2..+-1}") == Names{"{1..2..+-1}"});  // not a step: kept
}

BOOST_AUTO_TEST_CASE(ranges_at_the_int64_limits_are_exact) {
  // (each overflowed int64 before: undefined behaviour, caught by UBSan)
  BOOST_TEST(expand_braces("{9223372036854775806..9223372036854775807}") ==
             (Names{"9223372036854775806", "9223372036854775807"}));
  BOOST_TEST(expand_braces("{-9223372036854775807..-9223372036854775808}") ==
             (Names{"-9223372036854775807", "-9223372036854775808"}));
  BOOST_TEST(expand_braces("{0..9223372036854775807..9223372036854775807}") ==
             (Names{"0", "9223372036854775807"}));
  BOOST_TEST(expand_braces("{-9223372036854775808..9223372036854775807..9223372036854775807}") ==
             (Names{"-9223372036854775808", "-1", "9223372036854775806"}));
  BOOST_TEST(expand_braces("{-02..1}") == (Names{"-02", "-01", "000", "001"}));
  CHECK_ERROR(kiln::ValueError, expand_braces("{-9223372036854775808..9223372036854775807}"),
              "expands to more than 1000000 names");
  CHECK_ERROR(kiln::ValueError, expand_braces("x{0..99999999999}"),
              "expands to more than 1000000 names");
}

BOOST_AUTO_TEST_CASE(the_total_is_capped_before_it_is_built) {
  // 2^40 names: refused once past the cap instead of growing until memory runs out
  CHECK_ERROR(kiln::ValueError, expand_braces(repeat("{a,b}", 40)),
              "expands to more than 1000000 names");
  CHECK_ERROR(kiln::ValueError, expand_braces("{" + repeat("{a,b}", 30) + ",c}"),
              "expands to more than 1000000 names");
  CHECK_ERROR(kiln::ValueError, expand_braces(repeat("{0..999}", 3)),
              "expands to more than 1000000 names");
  CHECK_ERROR(kiln::ValueError, expand_braces("{0..599999}::{0..599999}"),
              "expands to more than 1000000 names");
  // few names, but too much text: 1e6 names of 300 characters
  CHECK_ERROR(kiln::ValueError, expand_braces("{0..999999}" + std::string(300, 'x')),
              "256 MiB of text");
  BOOST_TEST(expand_braces(repeat("{a,b}", 10)).size() == 1024u);
  BOOST_TEST(expand_braces("{0..999999}").size() == 1000000u);  // the cap itself is allowed
}

BOOST_AUTO_TEST_CASE(groups_in_a_row_are_not_nesting) {
  // 100 groups one after another: only nesting is limited
  BOOST_TEST(expand_braces(repeat("{a}", 100)) == Names{repeat("{a}", 100)});
  BOOST_TEST(expand_braces(repeat("{a,b}", 3)).front() == "aaa");
  BOOST_TEST(expand_braces(repeat("{a,b}", 3)).back() == "bbb");
  CHECK_ERROR(kiln::ValueError, expand_braces(repeat("{x,", 65) + repeat("}", 65)),
              "braces nested deeper than 64");
  CHECK_ERROR(kiln::ValueError, expand_braces("a}{b"), "unbalanced braces in 'a}{b'");
  CHECK_ERROR(kiln::ValueError, expand_braces("{a}}"), "unbalanced braces");
}

BOOST_AUTO_TEST_SUITE_END()
