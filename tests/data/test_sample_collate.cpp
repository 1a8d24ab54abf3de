// Sample values, collation as PyTorch's default_collate, transforms, and the state's text form.
#include "data_test.h"

using kiln::data::Sample;

BOOST_AUTO_TEST_SUITE(sample_and_collate)

BOOST_AUTO_TEST_CASE(sample_holds_each_kind_and_says_what_it_is) {
  Sample s = Sample::Map{{"cls", 3}, {"txt", "hello"}, {"x", 2.5}, {"ok", true}};
  BOOST_TEST(s.at("cls").to_int() == 3);
  BOOST_TEST(s.at("txt").str() == "hello");
  BOOST_TEST(s.at("x").to_double() == 2.5);
  BOOST_TEST(s.at("ok").to_bool());
  BOOST_TEST(s.contains("cls"));
  BOOST_TEST(!s.contains("jpg"));
  BOOST_TEST(s.size() == 4);
  CHECK_ERROR(kiln::IndexError, s.at("jpg"), "no key 'jpg'", "keys: cls, ok, txt, x");
  CHECK_ERROR(kiln::TypeError, s.at("txt").to_int(), "expected an int", "string");
  Sample l = Sample::List{1, 2, 3};
  BOOST_TEST(l.at(-1).to_int() == 3);
  CHECK_ERROR(kiln::IndexError, l.at(3), "index 3 is out of range for a list of 3");
  Sample n;
  n["a"] = 1;  // None becomes a map
  BOOST_TEST(n.is_map());
  BOOST_TEST(s.repr() == "{\"cls\": 3, \"ok\": true, \"txt\": \"hello\", \"x\": 2.5}");
}

BOOST_AUTO_TEST_CASE(collate_stacks_tensors_and_numbers_and_lists_strings) {
  std::vector<Sample> samples;
  for (int i = 0; i < 3; ++i) {
    samples.push_back(Sample::Map{{"x", kiln::full({2}, i, kiln::kFloat)},
                                  {"y", i},
                                  {"w", 0.5 * i},
                                  {"name", "s" + std::to_string(i)},
                                  {"pair", Sample::List{i, 10 * i}}});
  }
  Sample b = kiln::data::collate(samples);
  BOOST_TEST(b.at("x").tensor().sizes().vec() == (std::vector<int64_t>{3, 2}));
  BOOST_TEST(b.at("x").tensor()[2][1].item<float>() == 2.0f);
  BOOST_TEST(b.at("y").tensor().dtype() == kiln::kLong);
  BOOST_TEST(data_test::ints(b.at("y").tensor()) == (std::vector<int64_t>{0, 1, 2}));
  BOOST_TEST(b.at("w").tensor().dtype() == kiln::kDouble);
  BOOST_TEST(b.at("name").list().at(2).str() == "s2");
  // a list of pairs becomes a pair of lists (zip(*batch))
  BOOST_TEST(data_test::ints(b.at("pair").at(1).tensor()) == (std::vector<int64_t>{0, 10, 20}));
}

BOOST_AUTO_TEST_CASE(collate_errors_name_the_field_and_the_entry) {
  std::vector<Sample> shapes = {Sample::Map{{"x", kiln::zeros({3})}},
                                Sample::Map{{"x", kiln::zeros({4})}}};
  CHECK_ERROR(kiln::ValueError, kiln::data::collate(shapes), "collate at 'x'",
              "stack expects each tensor to be equal size, but got [3] at entry 0 and [4]");
  std::vector<Sample> kinds = {Sample(1), Sample("a")};
  CHECK_ERROR(kiln::TypeError, kiln::data::collate(kinds), "entry 0 is int but entry 1 is string");
  std::vector<Sample> keys = {Sample::Map{{"a", 1}}, Sample::Map{{"b", 1}}};
  CHECK_ERROR(kiln::IndexError, kiln::data::collate(keys), "entry 1 has no key 'a'");
  std::vector<Sample> nones = {Sample(), Sample()};
  CHECK_ERROR(kiln::TypeError, kiln::data::collate(nones), "is None");
}

BOOST_AUTO_TEST_CASE(transforms_compose_select_and_to_tuple) {
  namespace T = kiln::data::transforms;
  Sample s = Sample::Map{{"jpg", kiln::ones({2, 2, 3}, kiln::kByte)}, {"cls", 7}, {"x", 1}};
  auto t = T::compose({T::map_field("cls", [](Sample v) { return Sample(v.to_int() + 1); }),
                       T::to_chw_float("jpg"), T::to_tuple({"jpg", "cls"})});
  Sample out = t(s);
  BOOST_TEST(out.is_list());
  BOOST_TEST(out.at(0).tensor().sizes().vec() == (std::vector<int64_t>{3, 2, 2}));
  BOOST_TEST(out.at(0).tensor().dtype() == kiln::kFloat);
  BOOST_TEST(out.at(1).to_int() == 8);
  BOOST_TEST(T::select({"x"})(s).size() == 1);
  CHECK_ERROR(kiln::IndexError, T::to_tuple({"png"})(s), "no key 'png'");
}

BOOST_AUTO_TEST_CASE(state_text_round_trips) {
  Sample s = Sample::Map{{"a", Sample::List{1, -2, Sample()}},
                         {"b", "quote \" and \\ and \n"},
                         {"c", 0.25},
                         {"d", true},
                         {"e", int64_t{9007199254740993}}};
  std::string text = kiln::data::dump_state(s);
  Sample back = kiln::data::parse_state(text);
  BOOST_TEST(kiln::data::dump_state(back) == text);
  BOOST_TEST(back.at("e").to_int() == 9007199254740993);
  BOOST_TEST(back.at("c").is_double());
  CHECK_ERROR(kiln::ValueError, kiln::data::parse_state("{\"a\": [1, 2}"), "expected ']'",
              "offset");
  CHECK_ERROR(kiln::TypeError, kiln::data::dump_state(Sample(kiln::zeros({1}))), "no tensors");
}

BOOST_AUTO_TEST_SUITE_END()
