// The tar source: WebDataset's grouping rules, brace patterns, decoders, compressed shards, the
// error policy, and the tar image dataset of "Effective PyTorch" through 0, 1, 2 and 8 workers.
#include "data_test.h"
#include "images.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <sstream>

using namespace kiln::data;
using data_test::RawMember;
using data_test::TempDir;

namespace {

// The field names of each sample, "key:ext,ext".
std::vector<std::string> layout(const std::vector<Sample>& samples) {
  std::vector<std::string> out;
  for (const Sample& s : samples) {
    std::string text = s.at("__key__").str() + ":";
    bool first = true;
    for (const auto& [k, v] : s.map()) {
      if (k.rfind("__", 0) == 0) continue;
      text += (first ? "" : ",") + k;
      first = false;
    }
    out.push_back(text);
  }
  return out;
}

// A compressed copy of a tar file through libarchive ("gzip" or "zstd").
void compress(const std::string& tar, const std::string& out, const std::string& filter) {
  std::string bytes = data_test::read_file(tar);
  archive* a = archive_write_new();
  archive_write_set_format_raw(a);
  if (filter == "gzip") {
    archive_write_add_filter_gzip(a);
  } else {
    archive_write_add_filter_zstd(a);
  }
  BOOST_REQUIRE(archive_write_open_filename(a, out.c_str()) == ARCHIVE_OK);
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_pathname(e, "data");
  archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
  archive_write_header(a, e);
  archive_write_data(a, bytes.data(), bytes.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
}

std::vector<uint8_t> gradient(int h, int w, int c) {
  std::vector<uint8_t> p(static_cast<size_t>(h * w * c));
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>((i * 7) % 256);
  return p;
}

// The tar image dataset of "Effective PyTorch": `n` JPEG images (8x8 RGB, filled with
// i % 200) with a class.
std::string write_image_shards(const TempDir& dir, int shards, int n) {
  TarShardWriter w(dir / "images-%03d.tar", int64_t{1} << 40, (n + shards - 1) / shards);
  for (int i = 0; i < n; ++i) {
    std::vector<uint8_t> px(8 * 8 * 3, static_cast<uint8_t>(i % 200));
    w.write(data_test::key_of(i),
            {{"jpg", data_test::encode_jpeg(8, 8, 3, px.data())}, {"cls", std::to_string(i % 10)}});
  }
  w.close();
  BOOST_REQUIRE_EQUAL(static_cast<int>(w.shards().size()), shards);
  char last[16];
  std::snprintf(last, sizeof last, "%03d", shards - 1);
  return "tar:" + (dir / "images-{000..") + last + "}.tar";
}

// Captures what the core prints on std::cerr (its warnings) while alive.
class CaptureStderr {
 public:
  CaptureStderr() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(old_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::stringstream buffer_;
  std::streambuf* old_;
};

// Item 9 of issue 13: a shard cut at any byte before the end of its first end-of-archive block
// raises under ErrorPolicy::Raise and warns under Warn, naming the shard and a byte offset; a
// cut after it reads every sample (Note [A shard ends with its end-of-archive block]). Swept
// over every cut of a plain shard through the in-place reader, and over sampled cuts through
// libarchive, plain and gzip-compressed.
// `eoa` is the offset of the first end-of-archive block.
void check_cuts(const std::string& good, size_t eoa, const std::vector<size_t>& cuts,
                const std::string& ext, bool compressed) {
  TempDir dir;
  BOOST_REQUIRE(good.find_first_not_of('\0', eoa) == std::string::npos);
  BOOST_REQUIRE(good.find_first_not_of('\0', eoa - 512) < eoa);  // the last member's block
  std::string plain = dir / "cut.tar", path = dir / ("cut" + ext);
  int raised = 0, complete = 0;
  for (size_t cut : cuts) {
    std::string bytes = good.substr(0, cut);
    // (removed first: ext4 flushes a file truncated by O_TRUNC on close, ~1 ms a cut)
    std::filesystem::remove(plain);
    std::filesystem::remove(path);
    if (compressed) {
      data_test::write_file(plain, bytes);
      compress(plain, path, "gzip");
    } else {
      data_test::write_file(path, bytes);
    }
    bool whole = cut >= eoa + 512;
    std::string at = "cut at " + std::to_string(cut) + " of " + std::to_string(good.size());
    try {
      size_t n = data_test::read_all("tar:" + path).size();
      BOOST_TEST(whole, at << ": read " << n << " samples without an error");
      BOOST_TEST(n == 3u, at);
      ++complete;
    } catch (const kiln::Error& e) {
      std::string m = e.what();
      BOOST_TEST(!whole, at << ": " << m);
      BOOST_TEST(data_test::contains(m, "shard '" + path + "'"), at << ": " << m);
      BOOST_TEST(data_test::contains(m, "byte offset"), at << ": " << m);
      ++raised;
    }
    if (whole || cut % 11 != 0) continue;  // warn on a sample of the cuts
    CaptureStderr err;
    size_t n =
        data_test::read_all("tar:" + path, SourceOptions().on_error(ErrorPolicy::Warn)).size();
    BOOST_TEST(n <= 3u, at);
    std::string w = err.text();
    BOOST_TEST(data_test::contains(w, "warning"), at << ": " << w);
    BOOST_TEST(data_test::contains(w, "shard '" + path + "'"), at << ": " << w);
    BOOST_TEST(data_test::contains(w, "byte offset"), at << ": " << w);
  }
  BOOST_TEST(raised > 0);
  BOOST_TEST(complete > 0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tar_source)

BOOST_AUTO_TEST_CASE(brace_patterns_keep_zero_padding) {
  BOOST_TEST(expand_braces("train-{000..002}.tar") ==
             (std::vector<std::string>{"train-000.tar", "train-001.tar", "train-002.tar"}));
  BOOST_TEST(expand_braces("s{8..10}") == (std::vector<std::string>{"s8", "s9", "s10"}));
  BOOST_TEST(expand_braces("s{08..10}") == (std::vector<std::string>{"s08", "s09", "s10"}));
  BOOST_TEST(expand_braces("{a,b}{1,2}") == (std::vector<std::string>{"a1", "a2", "b1", "b2"}));
  BOOST_TEST(expand_braces("x{a,{0..1}}") == (std::vector<std::string>{"xa", "x0", "x1"}));
  BOOST_TEST(expand_braces("{0..6..3}::b") == (std::vector<std::string>{"0", "3", "6", "b"}));
  BOOST_TEST(expand_braces("{c..a}") == (std::vector<std::string>{"c", "b", "a"}));
  BOOST_TEST(expand_braces("plain{}") == (std::vector<std::string>{"plain{}"}));
  CHECK_ERROR(kiln::ValueError, expand_braces("a{0..2"), "unbalanced braces");
}

BOOST_AUTO_TEST_CASE(grouping_follows_webdataset) {
  TempDir dir;
  std::string path = dir / "g.tar";
  data_test::write_file(path, data_test::tar_bytes({
                                  {"__meta__/info.json", "{}"},  // metadata: skipped
                                  {"__index__", "x"},            // metadata: skipped
                                  {"d", "", '5'},                // a folder: skipped
                                  {"000001.seg.png", "a"},       // key 000001, field seg.png
                                  {"000001.JPG", "b"},           // lower-cased
                                  {"dir.v1/abc.jpg", "c"},       // the key keeps the folder's dot
                                  {"a.b.c.jpg", "d"},            // key a, field b.c.jpg
                                  {"noext", "e"},                // dropped
                                  {".hidden", "f"},              // dropped
                                  {"x.y/z", "g"},  // no dot in the last component: dropped
                                  {"k.txt", "1"},
                                  {"j.txt", "2"},
                                  {"k.cls", "3"},  // k again: a second sample
                              }));
  std::vector<Sample> s = data_test::read_all("tar:" + path, SourceOptions().decode(false));
  BOOST_TEST(layout(s) == (std::vector<std::string>{"000001:jpg,seg.png", "dir.v1/abc:jpg",
                                                    "a:b.c.jpg", "k:txt", "j:txt", "k:cls"}));
  BOOST_TEST(s[0].at("__url__").str() == path);
  BOOST_TEST(s[0].at("jpg").tensor().dtype() == kiln::kByte);  // undecoded: bytes
}

BOOST_AUTO_TEST_CASE(duplicate_extension_is_an_error_naming_member_and_offset) {
  TempDir dir;
  std::string path = dir / "dup.tar";
  data_test::write_file(
      path, data_test::tar_bytes({{"a.txt", "1"}, {"b.txt", "2"}, {"b.TXT", "3"}, {"c.txt", "4"}}));
  CHECK_ERROR(kiln::Error, data_test::read_all("tar:" + path),
              "tar source '" + path + "': shard '" + path + "'",
              "member 'b.txt' at byte offset 2048: duplicate file name in tar file");
  // warn: the bad sample is skipped, the shard goes on
  std::vector<Sample> s =
      data_test::read_all("tar:" + path, SourceOptions().on_error(ErrorPolicy::Warn));
  BOOST_TEST(layout(s) == (std::vector<std::string>{"a:txt", "c:txt"}));
}

BOOST_AUTO_TEST_CASE(decoders_by_last_extension) {
  TempDir dir;
  std::string path = dir / "dec.tar";
  std::vector<uint8_t> rgb = gradient(4, 5, 3), ga = gradient(3, 2, 2);
  // npy: float32 [2, 3] in C order, and int16 [2, 2] big endian in Fortran order
  std::string npy = encode_npy(kiln::arange(6, kiln::kFloat).reshape({2, 3}));
  std::string header = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string fortran = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) +
                        '\0' + header + std::string("\x00\x01\x00\x03\x00\x02\x00\x04", 8);
  data_test::write_file(
      path, data_test::tar_bytes({
                {"s.txt", "hello"},
                {"s.cls", " 42\n"},
                {"s.json", R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})"},
                {"s.npy", npy},
                {"s.f.npy", fortran},
                {"s.png", data_test::encode_png(4, 5, 3, rgb.data())},
                {"s.ga.png", data_test::encode_png(3, 2, 2, ga.data())},
                {"s.jpg", data_test::encode_jpeg(8, 8, 1, std::vector<uint8_t>(64, 77).data())},
                {"s.bin", "\x01\x02"},
            }));
  std::vector<Sample> all = data_test::read_all("tar:" + path);
  BOOST_REQUIRE_EQUAL(all.size(), 1u);
  const Sample& s = all[0];
  BOOST_TEST(s.at("txt").str() == "hello");
  BOOST_TEST(s.at("cls").tensor().dim() == 0);
  BOOST_TEST(s.at("cls").tensor().item<int64_t>() == 42);
  BOOST_TEST(s.at("json").at("a").at(1).to_double() == 2.5);
  BOOST_TEST(s.at("json").at("a").at(3).is_none());
  BOOST_TEST(s.at("json").at("b").at("c").to_int() == -3);
  BOOST_TEST(s.at("npy").tensor().equal(kiln::arange(6, kiln::kFloat).reshape({2, 3})));
  kiln::Tensor f = s.at("f.npy").tensor();
  BOOST_TEST(f.dtype() == kiln::kShort);
  BOOST_TEST(data_test::ints(f.flatten()) == (std::vector<int64_t>{1, 2, 3, 4}));
  kiln::Tensor png = s.at("png").tensor();
  BOOST_TEST(png.sizes().vec() == (std::vector<int64_t>{4, 5, 3}));
  BOOST_TEST(png.equal(kiln::from_blob(rgb.data(), {4, 5, 3}, kiln::kByte)));
  BOOST_TEST(s.at("ga.png").tensor().sizes().vec() == (std::vector<int64_t>{3, 2, 2}));
  kiln::Tensor jpg = s.at("jpg").tensor();
  BOOST_TEST(jpg.sizes().vec() == (std::vector<int64_t>{8, 8, 1}));
  BOOST_TEST(std::abs(jpg[3][3][0].item<int64_t>() - 77) <= 1);
  BOOST_TEST(s.at("bin").tensor().sizes().vec() == (std::vector<int64_t>{2}));
  // json kept as text; a field decoded by a C++ function; a field skipped
  std::vector<Sample> raw = data_test::read_all(
      "tar:" + path, SourceOptions()
                         .decode("json", "text")
                         .decode("cls", [](const uint8_t*, size_t n) { return Sample(int64_t(n)); })
                         .decode("png", "skip"));
  BOOST_TEST(raw[0].at("json").str().rfind("{\"a\"", 0) == 0);
  BOOST_TEST(raw[0].at("cls").to_int() == 4);
  BOOST_TEST(!raw[0].contains("png"));
  BOOST_TEST(!raw[0].contains("ga.png"));  // skipped too: decoders go by the last extension
  CHECK_ERROR(kiln::ValueError,
              data_test::read_all("tar:" + path, SourceOptions().decode("json", "yaml")),
              "no decoder 'yaml' is registered");
}

BOOST_AUTO_TEST_CASE(decoder_errors_name_the_member) {
  TempDir dir;
  std::string path = dir / "bad.tar";
  data_test::write_file(
      path,
      data_test::tar_bytes({{"a.cls", "1"}, {"b.cls", "seven"}, {"c.json", "{"}, {"d.cls", "4"}}));
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + path),
              "shard '" + path + "': member 'b.cls' at byte offset 1024",
              "'seven' is not an integer");
  std::vector<Sample> s =
      data_test::read_all("tar:" + path, SourceOptions().on_error(ErrorPolicy::Ignore));
  BOOST_TEST(layout(s) == (std::vector<std::string>{"a:cls", "d:cls"}));
}

// Item 16 of issue 13: a tiny file whose header declares a huge image is refused before the
// decoder allocates it (Note [Image size limit] in plugins/datasets/decoders/image.cpp).
BOOST_AUTO_TEST_CASE(image_bombs_are_refused_before_decoding) {
  TempDir dir;
  std::string path = dir / "bombs.tar";
  std::string png = data_test::png_bomb(10000, 10000);  // 100 M pixels
  std::string jpg = data_test::jpeg_bomb(10000, 10000);
  BOOST_TEST(png.size() < 200u);
  BOOST_TEST(jpg.size() < 1000u);
  data_test::write_file(path, data_test::tar_bytes({{"a.png", png}, {"b.jpg", jpg}}));
  auto start = std::chrono::steady_clock::now();
  for (const char* field : {"png", "jpg"}) {
    CHECK_ERROR(kiln::ValueError,
                data_test::read_all("tar:" + path, SourceOptions().fields({field})),
                std::string(field) + " decoder: the image is 10000 x 10000 pixels, more than " +
                    "the limit of 89478485 pixels",
                "KILN_MAX_IMAGE_PIXELS");
  }
  auto took = std::chrono::steady_clock::now() - start;
  BOOST_TEST(std::chrono::duration<double>(took).count() < 5.0);
  // the limit is adjustable, and a bad value is named
  std::vector<uint8_t> px(20 * 20 * 3, 9);
  std::string small = dir / "small.tar";
  data_test::write_file(
      small,
      data_test::tar_bytes({{"a.png", data_test::encode_png(20, 20, 3, px.data())},
                            {"b.jpg", data_test::encode_jpeg(20, 20, 3, px.data(), 90, true)}}));
  setenv("KILN_MAX_IMAGE_PIXELS", "399", 1);
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + small),
              "the image is 20 x 20 pixels, more than the limit of 399 pixels");
  setenv("KILN_MAX_IMAGE_PIXELS", "400", 1);
  BOOST_TEST(data_test::read_all("tar:" + small).size() == 2u);
  setenv("KILN_MAX_IMAGE_PIXELS", "0", 1);  // no limit
  BOOST_TEST(data_test::read_all("tar:" + small).size() == 2u);
  setenv("KILN_MAX_IMAGE_PIXELS", "lots", 1);
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + small),
              "KILN_MAX_IMAGE_PIXELS='lots' is not a number of pixels");
  setenv("KILN_MAX_IMAGE_PIXELS", "99999999999999999999999", 1);
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + small), "is not a number of pixels");
  unsetenv("KILN_MAX_IMAGE_PIXELS");
  // a progressive JPEG of too many scans
  std::string slow = data_test::jpeg_with_scans(
      data_test::encode_jpeg(16, 16, 3, std::vector<uint8_t>(16 * 16 * 3, 50).data(), 90, true),
      600);
  data_test::write_file(path, data_test::tar_bytes({{"s.jpg", slow}}));
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + path),
              "jpg decoder: the progressive image has more than 500 scans");
}

// A decoder's tensor sizes come from the bytes it decodes: a size whose bytes overflow is an
// error, not a wrapped-around allocation.
BOOST_AUTO_TEST_CASE(a_decoder_tensor_size_that_overflows_is_refused) {
  kiln::PluginInfo info = kiln::load_plugin(KILN_DATA_TEST_PLUGIN_DIR "/huge_decoder.so");
  BOOST_REQUIRE(info.state == kiln::PluginState::Loaded);
  TempDir dir;
  std::string path = dir / "huge.tar";
  data_test::write_file(path, data_test::tar_bytes({{"a.huge", "x"}, {"b.huge", "y"}}));
  CHECK_ERROR(kiln::ValueError, data_test::read_all("tar:" + path),
              "member 'a.huge' at byte offset 0",
              "decoder asked for a tensor of uint8 [1099511627776, 1099511627776]",
              "its size in bytes overflows");
  DataLoader loader(open("tar:" + path), DataLoaderOptions(2));  // into a batch's column
  CHECK_ERROR(kiln::ValueError, *loader.begin(), "for a batch of 2", "overflows");
}

// A decoder's error kind picks the exception type (kiln_error_kind), through a DataLoader too.
BOOST_AUTO_TEST_CASE(a_decoders_error_kind_picks_the_exception_type) {
  kiln::PluginInfo info = kiln::load_plugin(KILN_DATA_TEST_PLUGIN_DIR "/huge_decoder.so");
  BOOST_REQUIRE(info.state == kiln::PluginState::Loaded);
  TempDir dir;
  std::string path = dir / "oom.tar";
  data_test::write_file(path, data_test::tar_bytes({{"a.oom", "x"}, {"b.oom", "y"}}));
  CHECK_ERROR(kiln::OutOfMemoryError, data_test::read_all("tar:" + path),
              "member 'a.oom' at byte offset 0", "oom decoder: 3 GiB asked, 1 GiB free");
  DataLoader loader(open("tar:" + path), DataLoaderOptions(2));
  CHECK_ERROR(kiln::OutOfMemoryError, *loader.begin(), "oom decoder: 3 GiB asked");
}

BOOST_AUTO_TEST_CASE(compressed_shards_read_the_same) {
  TempDir dir;
  std::string pattern = data_test::write_shards(dir, 2, 5);
  compress(dir / "train-000000.tar", dir / "c-000.tar.gz", "gzip");
  compress(dir / "train-000001.tar", dir / "c-001.tar.zst", "zstd");
  std::vector<Sample> plain = data_test::read_all("tar:" + pattern);
  std::vector<Sample> packed =
      data_test::read_all("tar:" + (dir / "c-000.tar.gz") + "::" + (dir / "c-001.tar.zst"));
  BOOST_REQUIRE_EQUAL(plain.size(), packed.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    BOOST_TEST(plain[i].at("__key__").str() == packed[i].at("__key__").str());
    BOOST_TEST(plain[i].at("bin").tensor().equal(packed[i].at("bin").tensor()));
  }
  // globs list the files, sorted
  BOOST_TEST(open("tar:" + (dir / "c-*.tar.*"))->shards().size() == 2u);
}

BOOST_AUTO_TEST_CASE(truncated_and_corrupt_shards_raise_or_are_skipped) {
  TempDir dir;
  std::string pattern = data_test::write_shards(dir, 3, 4, 1000);
  std::string second = dir / "train-000001.tar";
  std::string bytes = data_test::read_file(second);
  data_test::write_file(second, bytes.substr(0, 512 * 7 + 100));  // inside the 2nd sample
  CHECK_ERROR(kiln::Error, data_test::read_all("tar:" + pattern), "shard '" + second + "'",
              "at byte offset", "truncated shard");
  // warn: the rest of that shard is lost, the next shard is read
  // (the sample read before the break is delivered)
  std::vector<Sample> s =
      data_test::read_all("tar:" + pattern, SourceOptions().on_error(ErrorPolicy::Warn));
  BOOST_TEST(s.size() == 4u + 1u + 4u);
  // a flipped byte in a header: the checksum says so
  bytes[512 * 7 + 10] ^= 0x40;
  data_test::write_file(second, bytes);
  CHECK_ERROR(kiln::Error, data_test::read_all("tar:" + pattern),
              "header at byte offset 3584: bad header checksum");
  // a missing shard
  std::filesystem::remove(second);
  CHECK_ERROR(kiln::Error, data_test::read_all("tar:" + pattern),
              "shard '" + second + "': cannot open");
  BOOST_TEST(
      data_test::read_all("tar:" + pattern, SourceOptions().on_error(ErrorPolicy::Ignore)).size() ==
      8u);
  // through libarchive too
  setenv("KILN_TAR_READER", "libarchive", 1);
  data_test::write_file(second, bytes.substr(0, 512 * 7 + 100));
  CHECK_ERROR(kiln::Error, data_test::read_all("tar:" + pattern), "shard '" + second + "'");
  unsetenv("KILN_TAR_READER");
}

BOOST_AUTO_TEST_CASE(every_cut_of_a_shard_raises_or_reads_whole) {
  TempDir dir;
  data_test::write_shards(dir, 1, 3, 700);  // members over a block: cuts inside data, padding
  std::string good = data_test::read_file(dir / "train-000000.tar");
  size_t eoa = good.size() - 1024;  // TarShardWriter ends with two zero blocks
  good.resize((good.size() + 10239) / 10240 * 10240, '\0');  // whole records, as tar writes
  std::vector<size_t> every, sampled;
  for (size_t cut = 0; cut <= good.size(); ++cut) {
    // every byte up to the second end-of-archive block, and then the ends of the file
    if (cut <= eoa + 1024 || cut + 1 >= good.size()) every.push_back(cut);
    // each block boundary and its neighbours, and every 37th byte
    if (cut % 512 <= 1 || cut % 512 == 511 || cut % 37 == 0) sampled.push_back(cut);
  }
  check_cuts(good, eoa, every, ".tar", false);
  setenv("KILN_TAR_READER", "libarchive", 1);
  check_cuts(good, eoa, sampled, ".tar", false);
  unsetenv("KILN_TAR_READER");
  check_cuts(good, eoa, sampled, ".tar.gz", true);
}

BOOST_AUTO_TEST_CASE(seed_image_dataset_each_sample_once_through_any_workers) {
  TempDir dir;
  const int n = 48;
  for (int shards : {1, 3, 8}) {
    TempDir sub;
    std::string url = write_image_shards(sub, shards, n);
    for (int workers : {0, 1, 2, 8}) {
      DataLoader loader(open(url), DataLoaderOptions(5).workers(workers));
      std::vector<std::string> keys;
      for (Sample& b : loader) {
        data_test::collect_keys(b, keys);
        BOOST_TEST(b.at("jpg").tensor().size(1) == 8);  // [B, 8, 8, 3], decoded into the batch
        BOOST_TEST(b.at("cls").tensor().dtype() == kiln::kLong);
      }
      std::map<std::string, int> c = data_test::count(keys);
      BOOST_TEST(keys.size() == static_cast<size_t>(n),
                 shards << " shards, " << workers << " workers");
      BOOST_TEST(c.size() == static_cast<size_t>(n));
    }
  }
}

BOOST_AUTO_TEST_CASE(seed_duplicate_samples_bug_without_splitting) {
  // The naive IterableDataset of "Effective PyTorch": every worker reads the whole archive.
  class Naive : public IterableDataset {
   public:
    explicit Naive(std::shared_ptr<SourceDataset> s) : source_(std::move(s)) {}
    std::unique_ptr<SampleStream> iter(const WorkerInfo&) override {
      return source_->iter(WorkerInfo{});  // ignores which worker it is
    }

   private:
    std::shared_ptr<SourceDataset> source_;
  };
  TempDir dir;
  std::string url = write_image_shards(dir, 1, 20);
  for (int workers : {1, 2, 8}) {
    DataLoader naive(std::make_shared<Naive>(open(url)), DataLoaderOptions(4).workers(workers));
    std::vector<std::string> keys = data_test::epoch_keys(naive);
    int duplicates = static_cast<int>(keys.size()) -
                     static_cast<int>(data_test::count(keys).size());
    BOOST_TEST(duplicates == 20 * (workers - 1));  // the bug, counted
    DataLoader split(open(url), DataLoaderOptions(4).workers(workers));
    std::vector<std::string> ok = data_test::epoch_keys(split);
    BOOST_TEST(ok.size() == data_test::count(ok).size());  // the fix: none
  }
}

BOOST_AUTO_TEST_CASE(ranks_and_workers_read_disjoint_shards) {
  TempDir dir;
  std::string pattern = data_test::write_shards(dir, 12, 3);
  std::vector<std::string> all;
  for (int rank = 0; rank < 3; ++rank) {
    auto ds = open("tar:" + pattern,
                   SourceOptions().rank(rank).world_size(3).shuffle_shards(true).seed(11));
    DataLoader loader(ds, DataLoaderOptions(2).workers(2));
    std::vector<std::string> keys = data_test::epoch_keys(loader);
    BOOST_TEST(keys.size() == 12u);  // 4 shards each
    all.insert(all.end(), keys.begin(), keys.end());
  }
  BOOST_TEST(data_test::count(all).size() == 36u);
  BOOST_TEST(all.size() == 36u);
  CHECK_ERROR(kiln::ValueError, open("tar:" + pattern, SourceOptions().rank(3).world_size(3)),
              "Invalid rank 3");
}

BOOST_AUTO_TEST_CASE(shuffling_is_seeded_per_epoch) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 4, 25);
  auto opts = SourceOptions().shuffle_shards(true).shuffle(30, 10).seed(3);
  auto run = [&](int workers) {
    DataLoader loader(open(url, opts), DataLoaderOptions(10).workers(workers).seed(1));
    std::vector<std::string> e0 = data_test::epoch_keys(loader);
    std::vector<std::string> e1 = data_test::epoch_keys(loader);
    return std::make_pair(e0, e1);
  };
  auto [a0, a1] = run(2);
  auto [b0, b1] = run(2);
  BOOST_TEST(a0 == b0);  // deterministic
  BOOST_TEST(a1 == b1);
  BOOST_TEST(a0 != a1);  // new order per epoch
  BOOST_TEST(data_test::count(a0).size() == 100u);
  std::vector<std::string> sorted = a0;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST(sorted != a0);  // shuffled within shards too
}

BOOST_AUTO_TEST_CASE(batches_decode_in_place_and_fields_select) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 1, 10, 48);
  DataLoader loader(open(url, SourceOptions().fields({"bin", "cls"}).meta(false)),
                    DataLoaderOptions(4));
  std::vector<int64_t> sizes;
  for (Sample& b : loader) {
    BOOST_TEST(b.size() == 2);  // bin and cls only
    kiln::Tensor bin = b.at("bin").tensor();
    BOOST_TEST(bin.dtype() == kiln::kByte);
    BOOST_TEST(bin.size(1) == 48);
    sizes.push_back(bin.size(0));
  }
  BOOST_TEST(sizes == (std::vector<int64_t>{4, 4, 2}));
  // raw bytes of different sizes: a list, as PyTorch collates bytes
  std::string path = dir / "ragged.tar";
  data_test::write_file(path, data_test::tar_bytes({{"a.bin", "x"}, {"b.bin", "yy"}}));
  DataLoader ragged(open("tar:" + path), DataLoaderOptions(2));
  Sample b = *ragged.begin();
  BOOST_TEST(b.at("bin").is_list());
  BOOST_TEST(b.at("bin").at(1).tensor().size(0) == 2);
}

BOOST_AUTO_TEST_CASE(fewer_shards_than_readers_still_reads_each_once) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 2, 5);
  DataLoader loader(open(url), DataLoaderOptions(3).workers(4));  // warns: 2 readers idle
  std::vector<std::string> keys = data_test::epoch_keys(loader);
  BOOST_TEST(keys.size() == 10u);
  BOOST_TEST(data_test::count(keys).size() == 10u);
}

// Item 23 of issue 13: the core says "cannot open" and the source says why, once.
BOOST_AUTO_TEST_CASE(a_missing_shard_says_cannot_open_once) {
  kiln::PluginInfo info = kiln::load_plugin(KILN_DATA_TEST_PLUGIN_DIR "/lines_source.so");
  BOOST_REQUIRE(info.state == kiln::PluginState::Loaded);
  TempDir dir;
  for (std::string scheme : {"lines", "tar"}) {
    std::string missing = dir / "missing";
    try {
      data_test::read_all(scheme + ":" + missing);
      BOOST_ERROR(scheme << ": no error for a missing shard");
    } catch (const kiln::Error& e) {
      std::string m = e.what();
      BOOST_TEST(data_test::contains(m, "shard '" + missing +
                                            "': cannot open: No such file or directory"),
                 m);
      BOOST_TEST(!data_test::contains(m, "cannot open: cannot open"), m);
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_scheme_and_empty_spec) {
  CHECK_ERROR(kiln::ValueError, open("nosuch:x"), "no data source for scheme 'nosuch'", "tar");
  CHECK_ERROR(kiln::ValueError, open("just-a-path.tar"), "names no source");
  bool tar = false, png = false;
  for (const SourceInfo& s : sources()) tar |= s.name == "tar";
  for (const SourceInfo& d : decoders()) png |= d.name == "png";
  BOOST_TEST(tar);
  BOOST_TEST(png);
}

BOOST_AUTO_TEST_SUITE_END()
