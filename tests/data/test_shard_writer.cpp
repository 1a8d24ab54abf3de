// TarShardWriter: shards of a target size or count, names kept, readable by the tar source.
#include "data_test.h"

using namespace kiln::data;
using data_test::TempDir;

BOOST_AUTO_TEST_SUITE(shard_writer)

BOOST_AUTO_TEST_CASE(shards_cut_by_size_and_count) {
  TempDir dir;
  TarShardWriter by_size(dir / "s-%03d.tar", 10 * 1024);
  for (int i = 0; i < 20; ++i) {
    by_size.write(data_test::key_of(i), {{"bin", std::string(1500, 'x')}});
  }
  by_size.close();
  // 2 KiB of tar per sample: 4 fit under 10 KiB with the end blocks
  BOOST_TEST(by_size.shards().size() == 5u);
  for (const std::string& s : by_size.shards()) {
    BOOST_TEST(std::filesystem::file_size(s) <= 10u * 1024u);
  }
  TarShardWriter by_count(dir / "c-%d.tar", int64_t{1} << 30, 7);
  for (int i = 0; i < 20; ++i) by_count.write(data_test::key_of(i), {{"txt", "t"}});
  by_count.close();
  BOOST_TEST(by_count.shards().size() == 3u);
  BOOST_TEST(by_count.shards()[2] == dir / "c-2.tar");
  BOOST_TEST(data_test::read_all("tar:" + (dir / "c-{0..2}.tar")).size() == 20u);
}

BOOST_AUTO_TEST_CASE(samples_round_trip_with_long_names_and_tensors) {
  TempDir dir;
  std::string long_key = "a/" + std::string(120, 'k') + "/000001";
  {
    TarShardWriter w(dir / "r-%06d.tar");
    w.write(Sample::Map{{"__key__", long_key},
                        {"txt", "hello"},
                        {"cls", 7},
                        {"npy", kiln::arange(6, kiln::kFloat).reshape({2, 3})},
                        {"bin", kiln::full({3}, 9, kiln::kByte)}});
    // the destructor closes and renames
  }
  BOOST_TEST(!std::filesystem::exists(dir / "r-000000.tar.tmp"));
  std::vector<Sample> s = data_test::read_all("tar:" + (dir / "r-000000.tar"));
  BOOST_REQUIRE_EQUAL(s.size(), 1u);
  BOOST_TEST(s[0].at("__key__").str() == long_key);
  BOOST_TEST(s[0].at("txt").str() == "hello");
  BOOST_TEST(s[0].at("cls").tensor().item<int64_t>() == 7);
  BOOST_TEST(s[0].at("npy").tensor().equal(kiln::arange(6, kiln::kFloat).reshape({2, 3})));
  BOOST_TEST(data_test::ints(s[0].at("bin").tensor()) == (std::vector<int64_t>{9, 9, 9}));
}

BOOST_AUTO_TEST_CASE(bad_samples_and_patterns_are_refused) {
  TempDir dir;
  CHECK_ERROR(kiln::ValueError, TarShardWriter(dir / "nopattern.tar"), "needs one integer");
  TarShardWriter w(dir / "b-%02d.tar");
  CHECK_ERROR(kiln::ValueError, w.write("a.b", {{"txt", "x"}}), "has a dot");
  CHECK_ERROR(kiln::ValueError, w.write("a", {{"txt", "x"}, {"txt", "y"}}), "field 'txt' twice");
  CHECK_ERROR(kiln::TypeError, w.write(Sample::Map{{"__key__", "a"}, {"x", 1.5}}),
              "field 'x' is double");
}

BOOST_AUTO_TEST_SUITE_END()
