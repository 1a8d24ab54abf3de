// A deterministic mutation fuzzer for the tar source, run by ctest: a few thousand damaged
// shards (truncations, flipped bytes, rewritten header fields, zero blocks, gzip-compressed
// damage for the libarchive path) go through kiln::data::open and the DataLoader. Each must end
// in samples or a kiln::Error: no crash, no hang, no other exception. (tests/data/fuzz_tar.cpp
// is the libFuzzer target for the same readers, built when clang is there.)
#include "data_test.h"

#include <archive.h>
#include <archive_entry.h>

#include <random>

using namespace kiln::data;
using data_test::TempDir;

namespace {

std::string gzip(const std::string& bytes) {
  archive* a = archive_write_new();
  archive_write_set_format_raw(a);
  archive_write_add_filter_gzip(a);
  std::string out(bytes.size() + 4096, '\0');
  size_t used = 0;
  archive_write_open_memory(a, out.data(), out.size(), &used);
  archive_entry* e = archive_entry_new();
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_pathname(e, "x");
  archive_entry_set_size(e, static_cast<la_int64_t>(bytes.size()));
  archive_write_header(a, e);
  archive_write_data(a, bytes.data(), bytes.size());
  archive_entry_free(e);
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return out;
}

// One damaged copy of `good`, chosen by `rng`.
std::string mutate(const std::string& good, std::mt19937_64& rng, std::string& what) {
  std::string b = good;
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % std::max<size_t>(n, 1)); };
  switch (rng() % 6) {
    case 0:
      b.resize(pick(b.size()));
      what = "truncated to " + std::to_string(b.size());
      break;
    case 1:
      for (int i = 0, n = 1 + static_cast<int>(pick(8)); i < n; ++i) {
        b[pick(b.size())] = static_cast<char>(rng());
      }
      what = "flipped bytes";
      break;
    case 2: {  // a header field rewritten, with a valid checksum so the parser goes on
      size_t block = pick(b.size() / 512) * 512;
      static const size_t kFields[][2] = {{0, 100}, {124, 12}, {156, 1}, {257, 8}, {345, 155}};
      const auto& f = kFields[pick(5)];
      for (size_t i = 0; i < f[1]; ++i) b[block + f[0] + i] = "0777 \0x9LK5g"[pick(12)];
      std::memset(&b[block + 148], ' ', 8);
      unsigned sum = 0;
      for (size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(b[block + i]);
      std::snprintf(&b[block + 148], 8, "%06o", sum);
      what = "header field at " + std::to_string(block + f[0]);
      break;
    }
    case 3:  // a zero block in the middle: the archive ends early
      std::memset(&b[pick(b.size() / 512) * 512], 0, 512);
      what = "zero block";
      break;
    case 4:  // a huge size field
      std::snprintf(&b[pick(b.size() / 512) * 512 + 124], 12, "%011o", 037777777777u);
      what = "huge size";
      break;
    default: {
      std::string z = gzip(good);
      z.resize(z.size() / 2 + pick(z.size() / 2));
      if (rng() % 2) z[10 + pick(z.size() - 10)] ^= 0x5a;
      what = "damaged gzip";
      return z;
    }
  }
  return b;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tar_fuzz)

BOOST_AUTO_TEST_CASE(damaged_shards_never_crash_or_hang) {
  TempDir dir;
  std::string pattern = data_test::write_shards(dir, 1, 12, 700);
  std::string good = data_test::read_file(dir / "train-000000.tar");
  std::mt19937_64 rng(20240611);
  int cases = 0, errors = 0, samples = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string what;
    std::string bad = mutate(good, rng, what);
    std::string path = dir / "fuzz.tar";
    data_test::write_file(path, bad);
    // (Warn prints each problem; a few cases are enough to run that path.)
    ErrorPolicy policy = i % 100 == 1 ? ErrorPolicy::Warn
                         : i % 3 == 0 ? ErrorPolicy::Ignore
                                      : ErrorPolicy::Raise;
    try {
      if (i % 50 == 0) {  // now and then through worker threads
        DataLoader loader(open("tar:" + path, SourceOptions().on_error(ErrorPolicy::Ignore)),
                          DataLoaderOptions(5).workers(1));
        samples += static_cast<int>(data_test::epoch_keys(loader).size());
      } else {
        samples += static_cast<int>(
            data_test::read_all("tar:" + path, SourceOptions().on_error(policy)).size());
      }
    } catch (const kiln::Error&) {
      ++errors;
    } catch (const std::exception& e) {
      BOOST_ERROR("case " << i << " (" << what << "): not a kiln::Error: " << e.what());
    }
    ++cases;
  }
  BOOST_TEST(cases == 3000);
  BOOST_TEST(errors > 500);    // most damage is reported...
  BOOST_TEST(samples > 1000);  // ... and the intact parts still read
  BOOST_TEST_MESSAGE("fuzz: " << cases << " damaged shards, " << errors << " errors, " << samples
                              << " samples read");
}

BOOST_AUTO_TEST_SUITE_END()
