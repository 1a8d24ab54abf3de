// The utilities libtorch code uses everywhere, with c10's shapes: irange, str and Join,
// make_tempfile, the warning handler (and kiln's own warnings reaching it), ArrayRef's members,
// OptionalArrayRef, and the aliases autograd::Variable, ExpandingArray and make_unique.
#include "tensor_test.h"

#include <kiln/kiln.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/stat.h>

using namespace kiln;

namespace {

bool exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

// Collects the messages of the warnings of this thread while it is set (PyTorch 2's form).
struct Collect : WarningHandler {
  using WarningHandler::process;
  void process(const Warning& warning) override {
    messages.push_back(warning.msg());
    lines.push_back(warning.source_location().line);
  }
  std::vector<std::string> messages;
  std::vector<uint32_t> lines;
};

// PyTorch 1.x's form, as PyTorch's own test support writes its WarningCapture.
struct CollectOld : WarningHandler {
  using WarningHandler::process;
  void process(const SourceLocation&, const std::string& msg, bool) override {
    messages.push_back(msg);
  }
  std::vector<std::string> messages;
};

void warn_once_here() { KILN_WARN_ONCE("only once ", 1); }

}  // namespace

BOOST_AUTO_TEST_SUITE(compat)

BOOST_AUTO_TEST_CASE(irange_visits_begin_to_end_typed_as_end) {
  std::vector<int64_t> seen;
  for (auto i : irange(int64_t{4})) seen.push_back(i);
  BOOST_TEST(seen == (std::vector<int64_t>{0, 1, 2, 3}), boost::test_tools::per_element());
  seen.clear();
  for (auto i : irange(2, int64_t{5})) {
    static_assert(std::is_same_v<decltype(i), int64_t>);
    seen.push_back(i);
  }
  BOOST_TEST(seen == (std::vector<int64_t>{2, 3, 4}), boost::test_tools::per_element());
  for (auto i : irange(size_t{3})) static_assert(std::is_same_v<decltype(i), size_t>);
  int count = 0;
  for ([[maybe_unused]] auto i : irange(-3)) ++count;  // end below begin: empty
  for ([[maybe_unused]] auto i : irange(5, 2)) ++count;
  for ([[maybe_unused]] auto i : irange(0)) ++count;
  BOOST_TEST(count == 0);
  BOOST_TEST(irange(7, 7).empty());
  BOOST_TEST(!irange(1).empty());
}

BOOST_AUTO_TEST_CASE(str_streams_its_arguments_and_join_puts_delimiters_between) {
  BOOST_TEST(str("a", 1, ' ', 2.5, std::string("z")) == "a1 2.5z");
  BOOST_TEST(str() == "");
  BOOST_TEST(str(IntArrayRef({2, 3})) == "[2, 3]");
  BOOST_TEST(Join(", ", std::vector<int>{1, 2, 3}) == "1, 2, 3");
  BOOST_TEST(Join("-", std::vector<std::string>{}) == "");
  BOOST_TEST(guts::to_string(42) == "42");
}

BOOST_AUTO_TEST_CASE(a_tempfile_exists_until_its_owner_is_destroyed) {
  std::string name;
  {
    TempFile file = make_tempfile();
    name = file.name;
    BOOST_TEST(exists(name));
    BOOST_TEST(file.fd >= 0);
    BOOST_TEST(name.find("kiln-file-") != std::string::npos);
    std::ofstream(name) << "data";
    TempFile moved = std::move(file);  // one owner: the moved-from object removes nothing
    BOOST_TEST(file.name.empty());
    BOOST_TEST(moved.name == name);
  }
  BOOST_TEST(!exists(name));
  std::optional<TempFile> maybe = try_make_tempfile("custom-");
  BOOST_REQUIRE(maybe.has_value());
  BOOST_TEST(maybe->name.find("custom-") != std::string::npos);
  {
    TempDir dir = make_tempdir();
    name = dir.name;
    BOOST_TEST(exists(name));
  }
  BOOST_TEST(!exists(name));
}

BOOST_AUTO_TEST_CASE(make_tempfile_names_the_path_and_reason_when_it_fails) {
  CHECK_ERROR(Error, make_tempfile("no-such-folder/x-"), "make_tempfile: cannot create",
              "no-such-folder/x-XXXXXX", "No such file or directory");
  BOOST_TEST(!try_make_tempfile("no-such-folder/x-").has_value());
  CHECK_ERROR(Error, make_tempdir("no-such-folder/x-"), "make_tempdir: cannot create");
}

BOOST_AUTO_TEST_CASE(a_handler_sees_kiln_warn_with_its_location) {
  Collect collect;
  {
    WarningUtils::WarningHandlerGuard guard(&collect);
    BOOST_TEST(get_warning_handler() == &collect);
    KILN_WARN("value ", 3, " is odd");
    uint32_t line = __LINE__ - 1;
    BOOST_REQUIRE(collect.messages.size() == 1u);
    BOOST_TEST(collect.messages[0] == "value 3 is odd");
    BOOST_TEST(collect.lines[0] == line);
  }
  BOOST_TEST(get_warning_handler() != &collect);  // the guard put the default back
  // The default handler: printed, not collected.
  KILN_WARN("to stderr");
  BOOST_TEST(collect.messages.size() == 1u);
}

BOOST_AUTO_TEST_CASE(pytorch_1_spellings_set_a_handler_with_the_three_argument_process) {
  CollectOld collect;
  WarningHandler* previous = Warning::get_warning_handler();
  Warning::set_warning_handler(&collect);
  KILN_WARN("old form");
  Warning::warn(SourceLocation{"f", "file.cpp", 1}, "direct", true);
  Warning::set_warning_handler(previous);
  BOOST_TEST(collect.messages == (std::vector<std::string>{"old form", "direct"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(warn_once_warns_once_unless_warn_always) {
  Collect collect;
  WarningUtils::WarningHandlerGuard guard(&collect);
  warn_once_here();
  warn_once_here();
  BOOST_TEST(collect.messages.size() == 1u);
  {
    Warning::WarnAlways always(true);
    BOOST_TEST(WarningUtils::get_warnAlways());
    warn_once_here();
    warn_once_here();
  }
  BOOST_TEST(!WarningUtils::get_warnAlways());
  warn_once_here();
  BOOST_TEST(collect.messages.size() == 3u);
}

BOOST_AUTO_TEST_CASE(the_handler_is_per_thread) {
  Collect collect;
  WarningUtils::WarningHandlerGuard guard(&collect);
  WarningHandler* seen_on_thread = nullptr;
  std::thread([&] { seen_on_thread = get_warning_handler(); }).join();
  BOOST_TEST(seen_on_thread != &collect);
  BOOST_TEST(seen_on_thread != nullptr);
}

BOOST_AUTO_TEST_CASE(kilns_own_warnings_reach_the_handler_and_it_may_throw) {
  Collect collect;
  WarningUtils::WarningHandlerGuard guard(&collect);
  { amp::autocast region(kCPU, kFloat32, true); }  // a dtype autocast does not take: a warning
  BOOST_REQUIRE(collect.messages.size() == 1u);
  BOOST_TEST(collect.messages[0].find("only bfloat16 and float16 are supported") !=
             std::string::npos);

  struct Throw : WarningHandler {
    using WarningHandler::process;
    void process(const Warning& w) override { throw ValueError("as error: " + w.msg()); }
  } to_error;
  WarningUtils::WarningHandlerGuard as_errors(&to_error);
  CHECK_ERROR(ValueError, KILN_WARN("x"), "as error: x");
}

BOOST_AUTO_TEST_CASE(array_ref_front_back_at_and_slice_are_checked) {
  std::vector<int64_t> v{1, 2, 3, 4};
  IntArrayRef a(v);
  BOOST_TEST(a.front() == 1);
  BOOST_TEST(a.back() == 4);
  BOOST_TEST(a.at(2) == 3);
  BOOST_TEST(a.slice(1, 2).vec() == (std::vector<int64_t>{2, 3}), boost::test_tools::per_element());
  BOOST_TEST(a.slice(3).vec() == (std::vector<int64_t>{4}), boost::test_tools::per_element());
  BOOST_TEST(a.slice(4).empty());
  BOOST_TEST(std::vector<int64_t>(a.rbegin(), a.rend()) == (std::vector<int64_t>{4, 3, 2, 1}),
             boost::test_tools::per_element());
  CHECK_ERROR(IndexError, a.at(4), "ArrayRef::at: index 4 is out of range for size 4");
  CHECK_ERROR(IndexError, a.slice(3, 2), "ArrayRef::slice: 2 elements from 3");
  CHECK_ERROR(IndexError, a.slice(5), "start 5 is out of range for size 4");
  IntArrayRef empty;
  CHECK_ERROR(IndexError, empty.front(), "ArrayRef::front: the array is empty");
  CHECK_ERROR(IndexError, empty.back(), "ArrayRef::back: the array is empty");
  std::vector<size_t> indices{7, 8};
  BOOST_TEST(ArrayRef<size_t>(indices).front() == 7u);
}

namespace {
int64_t first_of(OptionalIntArrayRef values) { return values.value()[0]; }
size_t count_of(OptionalIntArrayRef values) { return values ? values->size() : 0; }
}  // namespace

BOOST_AUTO_TEST_CASE(optional_array_ref_binds_what_array_ref_binds) {
  // one value (of another type too: the temporary is the caller's, as in libtorch's
  // OptionalArrayRefTest.DanglingPointerFix), braces, a vector, an ArrayRef, nothing
  BOOST_TEST(first_of(300) == 300);
  BOOST_TEST(first_of(int64_t{301}) == 301);
  BOOST_TEST(first_of({400}) == 400);
  BOOST_TEST(count_of({1, 2, 3}) == 3u);
  std::vector<int64_t> v{5, 6};
  BOOST_TEST(first_of(v) == 5);
  BOOST_TEST(first_of(IntArrayRef(v)) == 5);
  BOOST_TEST(count_of(std::nullopt) == 0u);
  BOOST_TEST(count_of({}) == 0u);
  OptionalIntArrayRef none;
  BOOST_TEST(!none.has_value());
  BOOST_TEST((none == std::nullopt));
  BOOST_TEST(none.value_or(IntArrayRef(v)).size() == 2u);
  CHECK_ERROR(ValueError, none.value(), "OptionalArrayRef::value: it holds no array");
  OptionalIntArrayRef some(v);
  some.reset();
  BOOST_TEST(!some);
}

BOOST_AUTO_TEST_CASE(libtorch_aliases_name_kilns_types) {
  static_assert(std::is_same_v<autograd::Variable, Tensor>);
  static_assert(std::is_same_v<autograd::variable_list, std::vector<Tensor>>);
  static_assert(std::is_same_v<ExpandingArray<2>, nn::ExpandingArray<2>>);
  ExpandingArray<3> e(4);
  BOOST_TEST(e[2] == 4);
  auto p = kiln::make_unique<int>(5);
  auto q = guts::make_unique<int[]>(3);
  BOOST_TEST(*p == 5);
  BOOST_TEST(q != nullptr);
}

BOOST_AUTO_TEST_CASE(scalar_conversions_are_libtorchs_and_checked) {
  Scalar f(3.75), i(int64_t{300}), b(true), nan(std::nan(""));
  BOOST_TEST(f.toDouble() == 3.75);
  BOOST_TEST(f.toFloat() == 3.75f);
  BOOST_TEST(f.toInt() == 3);  // truncated toward zero, as a C++ conversion
  BOOST_TEST(Scalar(-3.75).toLong() == -3);
  BOOST_TEST(i.toShort() == 300);
  BOOST_TEST(b.toBool());
  BOOST_TEST(i.isIntegral(false));
  BOOST_TEST(f.isFloatingPoint());
  BOOST_TEST(b.isBoolean());
  BOOST_TEST(static_cast<float>(Scalar(1.5).toHalf()) == 1.5f);
  CHECK_ERROR(ValueError, i.toChar(), "value cannot be converted to type int8_t without overflow",
              "300");
  CHECK_ERROR(ValueError, Scalar(int64_t{-1}).toByte(), "to type uint8_t without overflow");
  CHECK_ERROR(ValueError, nan.toLong(), "to type int64_t without overflow");
  CHECK_ERROR(ValueError, Scalar(1e19).to_long(), "to type int64_t without overflow");
  CHECK_ERROR(ValueError, Scalar(std::numeric_limits<double>::infinity()).toInt(), "int32_t");
  BOOST_TEST(Scalar(-9223372036854775808.0).toLong() == std::numeric_limits<int64_t>::min());
}

BOOST_AUTO_TEST_CASE(expanding_array_as_libtorchs) {
  ExpandingArray<3> a(std::array<int64_t, 3>{1, 2, 3});
  BOOST_TEST((*a)[2] == 3);
  BOOST_TEST(a->size() == 3u);
  (*a)[0] = 7;
  BOOST_TEST(a[0] == 7);
  CHECK_ERROR(ValueError, ExpandingArray<2>({1, 2, 3}), "Expected 2 values, but instead got 3");
  CHECK_ERROR(ValueError, ExpandingArray<2>(std::vector<int64_t>{1}),
              "Expected 2 values, but instead got 1");
}

BOOST_AUTO_TEST_CASE(slice_defaults_and_data_aliases) {
  Tensor x = arange(6).reshape({3, 2});
  BOOST_TEST(x.slice().sizes().vec() == (std::vector<int64_t>{3, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(x.slice(0, 1).sizes().vec() == (std::vector<int64_t>{2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(x.slice(1, 1).is_same_storage(x));
  Tensor w = randn({2}).set_requires_grad(true);  // set_requires_grad is const, as libtorch's
  BOOST_TEST(w.requires_grad());
  Tensor d = w.tensor_data(), v = w.variable_data();
  BOOST_TEST((!d.requires_grad() && !v.requires_grad() && d.is_same_storage(w)));
}

BOOST_AUTO_TEST_CASE(isinf_isfinite_and_scalar_comparison_methods) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor({1.0, inf, -inf, std::nan(""), 0.0});
  BOOST_TEST(x.isinf().equal(tensor({false, true, true, false, false})));
  BOOST_TEST(isposinf(x).equal(tensor({false, true, false, false, false})));
  BOOST_TEST(isneginf(x).equal(tensor({false, false, true, false, false})));
  BOOST_TEST(x.isfinite().equal(tensor({true, false, false, false, true})));
  BOOST_TEST(x.isnan().equal(tensor({false, false, false, true, false})));
  Tensor i = tensor({1, 2}, kByte);
  BOOST_TEST(i.isfinite().all().item<bool>());
  BOOST_TEST(!i.isinf().any().item<bool>());
  BOOST_TEST(x.to(kBFloat16).isinf().equal(x.isinf()));
  Tensor y = tensor({1.0, 2.0, 3.0});
  BOOST_TEST(y.gt(1.5).equal(tensor({false, true, true})));
  BOOST_TEST(y.ne(2).equal(tensor({true, false, true})));
  BOOST_TEST(y.le(2.0).equal(y.lt(2.5)));
}

BOOST_AUTO_TEST_SUITE_END()
