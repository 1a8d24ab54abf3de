// kiln::data::TarShardWriter — packs samples into WebDataset tar shards of a target size, as
// WebDataset's ShardWriter, so that users can make shards for the tar source:
//
//   kiln::data::TarShardWriter writer("out/train-%06d.tar", /*max_size=*/256 << 20);
//   writer.write("000001", {{"jpg", jpeg_bytes}, {"cls", "3"}});
//   writer.write(sample);   // a map: "__key__" and fields (bytes, text, ints, tensors)
//   writer.close();         // writer.shards() lists the files
//
// Shards are plain ustar (pax records for names longer than ustar holds), members
// "<key>.<field>" in the order given, written to "<name>.tmp" and renamed when complete, so a
// reader never sees a half-written shard. A new shard starts before a sample that would take the
// current one past max_size bytes or max_count samples. Compress afterwards if wanted
// (zstd out/train-000000.tar): the tar source reads .tar.zst and .tar.gz through libarchive.
#pragma once

#include <kiln/data/sample.h>
#include <kiln/export.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kiln::data {

class KILN_API TarShardWriter {
 public:
  // `pattern` holds one printf integer conversion ("%06d") for the shard number, counted from
  // `first_index`. max_size is in bytes of tar file; a sample larger than it gets a shard alone.
  explicit TarShardWriter(std::string pattern, int64_t max_size = int64_t{3} << 30,
                          int64_t max_count = 100000, int64_t first_index = 0);
  // Closes the current shard (errors are swallowed here: call close() to see them).
  ~TarShardWriter();
  TarShardWriter(const TarShardWriter&) = delete;
  TarShardWriter& operator=(const TarShardWriter&) = delete;

  // Writes one sample: members "<key>.<name>" with these bytes, in this order. Throws
  // kiln::ValueError for an empty or duplicate field name, or a key with a dot in its last
  // component; kiln::Error naming the file on I/O errors.
  void write(const std::string& key,
             const std::vector<std::pair<std::string, std::string>>& fields);
  // Writes a map sample: "__key__" (a string) and fields: strings as their bytes, ints as
  // decimal text, uint8 tensors as their raw bytes, other tensors as .npy; "__url__" is ignored.
  void write(const Sample& sample);
  // Finishes the current shard (end-of-archive blocks, rename).
  void close();

  // Shard files written so far (complete ones, and the current one once closed).
  const std::vector<std::string>& shards() const { return shards_; }
  int64_t samples_written() const { return total_count_; }

 private:
  void start_shard();
  void write_member(const std::string& name, const std::string& data);
  void write_bytes(const void* data, size_t n);

  std::string pattern_;
  int64_t max_size_, max_count_, next_index_;
  std::FILE* file_ = nullptr;
  std::string path_, tmp_path_;
  int64_t size_ = 0, count_ = 0, total_count_ = 0;
  std::vector<std::string> shards_;
};

// The .npy encoding of a CPU tensor (version 1.0, C order, little endian), as numpy.save writes.
KILN_API std::string encode_npy(const Tensor& tensor);

}  // namespace kiln::data
