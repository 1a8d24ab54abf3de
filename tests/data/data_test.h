// Helpers of kiln::data's tests: temporary folders, shards of known content, reading batches
// back, and checking errors by type and text.
#pragma once

#include "check_error.h"

#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace data_test {

namespace fs = std::filesystem;

using kiln_test::contains;

// A fresh folder under the system's temporary folder, removed with the object.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("kiln_data_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Writes `shards` shards of `per_shard` samples each ("train-000000.tar", ...): sample i has
// key "%06d" of i, a "cls" field (i % 10), a "txt" field ("sample i") and a "bin" field of
// `bin_bytes` bytes all equal to i % 251. Returns the brace pattern of the files.
std::string write_shards(const TempDir& dir, int shards, int per_shard, int bin_bytes = 16,
                         const std::string& stem = "train");

// Every __key__ of a batch (a map with "__key__" a list of strings), appended to `keys`.
void collect_keys(const kiln::data::Sample& batch, std::vector<std::string>& keys);

// Keys of one epoch of `loader`.
std::vector<std::string> epoch_keys(kiln::data::DataLoader& loader);

// How many times each key appears.
std::map<std::string, int> count(const std::vector<std::string>& keys);

// The ints of a 1-D int64 tensor.
std::vector<int64_t> ints(const kiln::Tensor& t);

// Key "%06d" of i.
std::string key_of(int i);

// A member of a hand-made tar: any name, any type flag ('0' file, '5' folder, ...).
struct RawMember {
  std::string name;
  std::string data;
  char type = '0';
};
// The bytes of a ustar archive of `members` (two zero blocks at the end).
std::string tar_bytes(const std::vector<RawMember>& members);
// Writes `bytes` to `path`.
void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);

// Every sample of a source read by one reader (workers(0)), decoded or not as `options` say.
std::vector<kiln::data::Sample> read_all(const std::string& url,
                                         kiln::data::SourceOptions options = {});

// The map-style dataset 0, 1, ..., n - 1 with key "i".
std::shared_ptr<kiln::data::Dataset> numbers(int64_t n);

// A plain iterable dataset (no provenance): worker w of n yields {"i": w}, {"i": w + n}, ...
// below 40.
class Strided40 : public kiln::data::IterableDataset {
 public:
  std::unique_ptr<kiln::data::SampleStream> iter(const kiln::data::WorkerInfo& w) override;
};

}  // namespace data_test
