// WebDataset's grouping of tar members into samples ("The WebDataset Format" in WebDataset's
// README, and webdataset issue 237 for keys with dots), followed exactly:
//  - only regular files count; names whose first component starts and ends with "__"
//    ("__meta__", "__meta__/x.json") are metadata and skipped;
//  - key = the path up to the first dot of the last component, extension = everything after
//    that dot, lower-cased ("a/000001.seg.PNG" -> key "a/000001", field "seg.png"); a last
//    component without a dot, or starting with one, is dropped;
//  - a sample is a run of consecutive members with the same key (a key seen again later starts
//    another sample); the same extension twice in one sample is an error (the sample is
//    skipped, the shard goes on);
//  - a sample never spans shards (one Grouper reads one shard);
//  - when the shard breaks off (truncated, corrupt), the sample read so far is still delivered
//    and the error comes with the next call: the rest of the shard is lost.
#pragma once

#include "members.hpp"

#include <kiln/sdk/plugin.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::tar {

// Splits a member name into key and extension; false when the member is dropped (metadata, no
// dot in the last component, or a leading dot).
bool split_name(std::string_view name, std::string_view& key, std::string_view& extension);

class Grouper {
 public:
  explicit Grouper(std::unique_ptr<MemberReader> reader);
  // Fills *out with the next sample; returns a KILN_SAMPLE_* code. On SKIP and ERROR,
  // error() names the member and byte offset.
  int32_t next(kiln_sample* out);
  const std::string& error() const { return error_; }

 private:
  struct Field {
    std::string name;            // the lower-cased extension
    std::vector<uint8_t> owned;  // a copy, from an UntilNext reader
    const uint8_t* data = nullptr;
    uint64_t data_offset = 0;  // where a Window reader holds the bytes
    uint64_t size = 0, offset = 0;
  };
  // Reads the next member that belongs to some sample into pending_; false at the end.
  bool read_pending();
  void take_pending(Field& f);

  std::unique_ptr<MemberReader> reader_;
  bool copy_;
  std::vector<Field> fields_;
  size_t n_fields_ = 0;
  std::vector<kiln_field> out_;
  std::string key_;
  Field pending_;
  std::string pending_key_;
  bool has_pending_ = false;
  bool done_ = false;
  std::string deferred_;  // an error met after a complete-looking sample: reported next time
  std::string error_;
};

}  // namespace kiln::tar
