// TarShardWriter: shards of a target size or count, names kept, readable by the tar source.
#include "data_test.h"

#include <archive.h>
#include <archive_entry.h>

using namespace kiln::data;
using data_test::TempDir;

namespace {

struct Member {
  std::string name, data;
  bool operator==(const Member&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Member& m) {
  return out << m.name << " (" << m.data.size() << " bytes)";
}

// The regular files of a tar file as libarchive reads it, in order; fails the test on anything
// libarchive warns about or that is not a plain tar.
std::vector<Member> members_by_libarchive(const std::string& path) {
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  BOOST_REQUIRE(archive_read_open_filename(a, path.c_str(), 10240) == ARCHIVE_OK);
  std::vector<Member> out;
  archive_entry* e = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    BOOST_TEST((archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR);
    BOOST_TEST(archive_entry_filetype(e) == AE_IFREG);
    Member m{archive_entry_pathname(e), std::string(archive_entry_size(e), '\0')};
    BOOST_TEST(archive_read_data(a, m.data.data(), m.data.size()) ==
               static_cast<la_ssize_t>(m.data.size()));
    out.push_back(std::move(m));
  }
  BOOST_TEST(status == ARCHIVE_EOF, archive_error_string(a));
  archive_read_free(a);
  return out;
}

}  // namespace

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

// See Note [Where the tar writer lives] in core/src/data/tar_writer.cpp: the writer shares no
// code or constant with the tar plugin's readers, so an independent reader (libarchive) checks
// its format, and both of the plugin's readers (its own ustar reader, and libarchive's) read
// back what it wrote.
BOOST_AUTO_TEST_CASE(shards_are_plain_tar_that_every_reader_reads_alike) {
  TempDir dir;
  std::string long_key = "deep/" + std::string(150, 'n') + "/000002";
  std::vector<Member> expected = {
      {"000001.empty", ""},
      {"000001.block", std::string(512, 'b')},
      {"000001.more", std::string(513, 'm')},
      {long_key + ".txt", "a name longer than ustar's 100 bytes"},
  };
  {
    TarShardWriter w(dir / "p-%d.tar");
    w.write("000001", {{"empty", ""}, {"block", expected[1].data}, {"more", expected[2].data}});
    w.write(long_key, {{"txt", expected[3].data}});
  }
  BOOST_TEST(members_by_libarchive(dir / "p-0.tar") == expected, boost::test_tools::per_element());
  std::vector<Sample> own = data_test::read_all("tar:" + (dir / "p-0.tar"));
  setenv("KILN_TAR_READER", "libarchive", 1);
  std::vector<Sample> by_libarchive = data_test::read_all("tar:" + (dir / "p-0.tar"));
  unsetenv("KILN_TAR_READER");
  BOOST_REQUIRE_EQUAL(own.size(), 2u);
  BOOST_REQUIRE_EQUAL(by_libarchive.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    BOOST_TEST(own[i].repr() == by_libarchive[i].repr());
  }
  BOOST_TEST(own[0].at("more").tensor().numel() == 513);
  BOOST_TEST(own[1].at("__key__").str() == long_key);
}

BOOST_AUTO_TEST_SUITE_END()
