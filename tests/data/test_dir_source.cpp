// The dir source: the ImageDirectoryDataset case of "Effective PyTorch", a folder of files grouped
// by key and split into shards for the workers.
#include "data_test.h"
#include "images.h"

#include <algorithm>
#include <fstream>
#include <limits>

using namespace kiln::data;
using data_test::TempDir;

BOOST_AUTO_TEST_SUITE(dir_source)

BOOST_AUTO_TEST_CASE(folder_of_images_each_sample_once_through_workers) {
  TempDir dir;
  const int n = 23;
  for (int i = 0; i < n; ++i) {
    std::string sub = i % 2 ? "cats" : "dogs";
    std::filesystem::create_directories(dir.path() / sub);
    std::vector<uint8_t> px(6 * 4 * 3, static_cast<uint8_t>(i));
    data_test::write_file(dir / (sub + "/" + data_test::key_of(i) + ".png"),
                          data_test::encode_png(6, 4, 3, px.data()));
    data_test::write_file(dir / (sub + "/" + data_test::key_of(i) + ".cls"), std::to_string(i % 2));
  }
  data_test::write_file(dir / "notes", "no extension: not a sample");
  auto ds = open("dir:" + dir.path().string() + "?shard_size=4");
  BOOST_TEST(ds->shards().size() == 6u);  // 23 samples in shards of 4
  for (int workers : {0, 2, 8}) {
    DataLoader loader(ds, DataLoaderOptions(5).workers(workers));
    std::vector<std::string> keys;
    for (Sample& b : loader) {
      data_test::collect_keys(b, keys);
      BOOST_TEST(b.at("png").tensor().sizes().vec()[1] == 6);
      kiln::Tensor cls = b.at("cls").tensor();
      for (int64_t j = 0; j < cls.size(0); ++j) {
        std::string key =
            keys[keys.size() - static_cast<size_t>(cls.size(0)) + static_cast<size_t>(j)];
        BOOST_TEST(cls[j].item<int64_t>() == (key.rfind("cats", 0) == 0 ? 1 : 0));
      }
    }
    BOOST_TEST(keys.size() == static_cast<size_t>(n), "workers=" << workers);
    BOOST_TEST(data_test::count(keys).size() == static_cast<size_t>(n));
  }
  // a pattern keeps some files: samples with the png only
  std::vector<Sample> png = data_test::read_all("dir:" + dir.path().string() + "?pattern=*.png");
  BOOST_TEST(png.size() == static_cast<size_t>(n));
  BOOST_TEST(!png[0].contains("cls"));
  CHECK_ERROR(kiln::Error, open("dir:" + (dir / "missing")), "is not a folder");
  CHECK_ERROR(kiln::Error, open("dir:" + dir.path().string() + "?colour=red"),
              "unknown option 'colour'");
}

BOOST_AUTO_TEST_CASE(options_of_the_spec_are_named_in_errors) {
  TempDir dir;
  for (int i = 0; i < 5; ++i) data_test::write_file(dir / (data_test::key_of(i) + ".txt"), "x");
  std::string url = "dir:" + dir.path().string();
  // std::stoll's bare "stoll" before
  for (std::string bad : {"abc", "", "0", "-4", "4x", "99999999999999999999"}) {
    CHECK_ERROR(kiln::Error, open(url + "?shard_size=" + bad),
                "option shard_size='" + bad + "' is not a positive integer", "shard_size=64");
  }
  // a huge shard_size is one shard ("the spec names no shard" before: the count overflowed)
  auto one = open(url + "?shard_size=9223372036854775807");
  BOOST_TEST(one->shards().size() == 1u);
  BOOST_TEST(data_test::read_all(url + "?shard_size=9223372036854775807").size() == 5u);
  BOOST_TEST(open(url + "?shard_size=2&pattern=*.txt")->shards().size() == 3u);
  // a huge world_size: rank 1 of 2^63 - 1 reads shard 1 only (rank + world_size overflowed)
  auto options = SourceOptions().world_size(std::numeric_limits<int64_t>::max()).rank(1);
  std::vector<Sample> rank1 = data_test::read_all(url + "?shard_size=1", options);
  BOOST_TEST(rank1.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

// The example plugin of docs/writing-a-data-source.md, loaded by hand.
BOOST_AUTO_TEST_SUITE(lines_source)

BOOST_AUTO_TEST_CASE(the_documented_plugin_reads_lines) {
  kiln::PluginInfo info = kiln::load_plugin(KILN_DATA_TEST_PLUGIN_DIR "/lines_source.so");
  BOOST_TEST(kiln::plugin_state_name(info.state) == std::string("loaded"), info.reason);
  TempDir dir;
  data_test::write_file(dir / "a.txt", "first\nsecond\n");
  data_test::write_file(dir / "b.txt", "third\n");
  DataLoader loader(open("lines:" + (dir / "{a,b}.txt")), DataLoaderOptions(2).workers(2));
  std::vector<std::string> lines;
  for (Sample& batch : loader) {
    for (const Sample& s : batch.at("txt").list()) lines.push_back(s.str());
  }
  std::sort(lines.begin(), lines.end());
  BOOST_TEST(lines == (std::vector<std::string>{"first", "second", "third"}));
}

BOOST_AUTO_TEST_SUITE_END()
