// The safetensors header's JSON reader and writer (core/src/serialize/json.h, compiled into
// this test): escapes, numbers, nesting, and errors with their byte offsets.
#include "serialize/json.h"
#include "serialize_test.h"

using kiln::json::Value;
using Kind = kiln::json::Value::Kind;

namespace {

std::string written(std::string_view s) {
  std::string out;
  kiln::json::write_string(out, s);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json)

BOOST_AUTO_TEST_CASE(values) {
  Value v =
      kiln::json::parse(" {\"a\" : [1, -2, 0, 9223372036854775807, 2.5, -1e3, true, false, null],\n"
                        "  \"b\":{\"c\":{}}, \"d\":[], \"e\":\"\"}\t");
  BOOST_REQUIRE(v.kind == Kind::Object);
  BOOST_REQUIRE_EQUAL(v.object.size(), 4u);
  BOOST_CHECK_EQUAL(v.object[0].first, "a");  // file order
  BOOST_CHECK_EQUAL(v.object[3].first, "e");
  const std::vector<Value>& a = v.find("a")->array;
  BOOST_REQUIRE_EQUAL(a.size(), 9u);
  BOOST_CHECK(a[0].kind == Kind::Integer && a[0].integer == 1);
  BOOST_CHECK(a[1].kind == Kind::Integer && a[1].integer == -2);
  BOOST_CHECK(a[2].kind == Kind::Integer && a[2].integer == 0);
  BOOST_CHECK_EQUAL(a[3].integer, INT64_MAX);
  BOOST_CHECK(a[4].kind == Kind::Number && a[4].number == 2.5);
  BOOST_CHECK(a[5].kind == Kind::Number && a[5].number == -1000);
  BOOST_CHECK(a[6].kind == Kind::Bool && a[6].boolean);
  BOOST_CHECK(a[7].kind == Kind::Bool && !a[7].boolean);
  BOOST_CHECK(a[8].kind == Kind::Null);
  BOOST_CHECK(v.find("b")->find("c")->kind == Kind::Object);
  BOOST_CHECK(v.find("d")->array.empty());
  BOOST_CHECK(v.find("e")->string.empty());
  BOOST_CHECK(v.find("zz") == nullptr);
}

BOOST_AUTO_TEST_CASE(string_escapes) {
  Value v = kiln::json::parse(
      R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20AC", "\ud83d\ude00", "raw \u00e9 é"])");
  BOOST_CHECK_EQUAL(v.array[0].string, "\"\\/\b\f\n\r\t");
  BOOST_CHECK_EQUAL(v.array[1].string, "A\xc3\xa9\xe2\x82\xac");
  BOOST_CHECK_EQUAL(v.array[2].string, "\xf0\x9f\x98\x80");
  BOOST_CHECK_EQUAL(v.array[3].string, "raw \xc3\xa9 \xc3\xa9");
}

BOOST_AUTO_TEST_CASE(writer_round_trips_every_byte) {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  all += '\0';
  std::string text = written(all);
  BOOST_CHECK_EQUAL(kiln::json::parse(text).string, all);
  BOOST_CHECK_EQUAL(written("a\"b\\c\n\x01\x1f"), "\"a\\\"b\\\\c\\n\\u0001\\u001f\"");
  BOOST_CHECK_EQUAL(written("\xc3\xa9/"), "\"\xc3\xa9/\"");  // UTF-8 and '/' as they are
}

BOOST_AUTO_TEST_CASE(errors_name_the_problem_and_offset) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "unexpected end of JSON at byte 0"},
      {"[1,]", "unexpected character ']' at byte 3"},
      {"[1 2]", "expected ']' at byte 3"},
      {"{\"a\":1,}", "expected a string key at byte 7"},
      {"{1:2}", "expected a string key at byte 1"},
      {"tru", "invalid JSON value at byte 0"},
      {"01", "unexpected data after the JSON value at byte 1"},
      {"-", "unexpected end of JSON at byte 1"},
      {"1.", "invalid number at byte 2"},
      {"1e", "invalid number at byte 2"},
      {"\"abc", "unexpected end of JSON at byte 4"},
      {"\"a\nb\"", "unescaped control character in a string at byte 2"},
      {"\"\\u12g4\"", "invalid hex digit in a \\u escape at byte 5"},
      {"\"\\u12\"", "unexpected end of JSON in a \\u escape at byte 3"},
      {"\"\\ud83d\"", "unpaired high surrogate in a \\u escape at byte 7"},
      {"\"\\ude00\"", "unpaired low surrogate in a \\u escape at byte 7"},
      {"\"\\ud83d\\u0041\"", "invalid low surrogate in a \\u escape at byte 13"},
      {"-99999999999999999999", "integer -99999999999999999999 out of range at byte 0"},
      {"{\"k\":1,\"k\":1}", "duplicate key \"k\" at byte 7"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("parsing " << c.text) {
      CHECK_ERROR(kiln::Error, kiln::json::parse(c.text), c.message);
    }
  }
  std::string deep(64, '[');
  deep += std::string(64, ']');
  BOOST_CHECK_NO_THROW(kiln::json::parse(deep));
  CHECK_ERROR(kiln::Error, kiln::json::parse("[" + deep + "]"), "JSON nested too deeply");
}

BOOST_AUTO_TEST_SUITE_END()
