// Truncated and corrupt files: each gives a kiln::Error naming the file and the problem, and none
// crashes or reads out of bounds.
#include "serialize_test.h"

#include <kiln/optim.h>

#include <filesystem>
#include <random>

using namespace kiln;
using namespace serialize_test;

namespace {

// Writes `bytes` and checks that loading them fails with `problem` after the standard prefix.
void check_corrupt(const ScratchDir& scratch, const std::string& bytes,
                   const std::string& problem) {
  std::string path = scratch.path("corrupt.safetensors");
  write_bytes(path, bytes);
  CHECK_ERROR(Error, load(path),
              "load: '" + path + "' is not a valid safetensors file: " + problem);
}

// A header with one tensor "a" of dtype/shape/offsets as given, and `data`.
std::string one_tensor(const std::string& info, const std::string& data) {
  return safetensors_bytes("{\"a\":" + info + "}", data);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(corrupt_files)

BOOST_AUTO_TEST_CASE(missing_or_not_a_file) {
  ScratchDir scratch;
  std::string missing = scratch.path("missing.safetensors");
  CHECK_ERROR(Error, load(missing),
              "load: cannot open '" + missing + "': No such file or directory");
  std::filesystem::create_directory(scratch.path("dir"));
  CHECK_ERROR(Error, load(scratch.path("dir")),
              "load: cannot read '" + scratch.path("dir") + "': it is a directory");
}

BOOST_AUTO_TEST_CASE(short_header) {
  ScratchDir scratch;
  check_corrupt(scratch, "", "it has 0 bytes, fewer than the 8 of the header length");
  check_corrupt(scratch, std::string("\x10\0\0", 3),
                "it has 3 bytes, fewer than the 8 of the header length");
  check_corrupt(scratch, safetensors_bytes("{}", "").substr(0, 9),
                "the header length 2 exceeds the 1 bytes that follow it (truncated file?)");
  std::string huge(8, '\0');
  huge[7] = 1;  // 2^56
  check_corrupt(scratch, huge + "{}",
                "the header length 72057594037927936 exceeds the format's limit of 100000000");
}

BOOST_AUTO_TEST_CASE(bad_json) {
  ScratchDir scratch;
  check_corrupt(scratch, safetensors_bytes("[1, 2]", ""),
                "the header does not start with '{' (not a safetensors file?)");
  check_corrupt(scratch, safetensors_bytes("{\"a\":{\"dtype\":\"F32\"", ""),
                "the header is not valid JSON: unexpected end of JSON at byte 19");
  check_corrupt(scratch, safetensors_bytes("{} x", ""),
                "the header is not valid JSON: unexpected data after the JSON value at byte 3");
  check_corrupt(scratch, safetensors_bytes("{\"a\\q\":1}", ""),
                "the header is not valid JSON: invalid escape '\\q' at byte 4");
  check_corrupt(scratch, safetensors_bytes("{\"a\" 1}", ""),
                "the header is not valid JSON: expected ':' at byte 5");
  check_corrupt(scratch, safetensors_bytes("{\"a\":1,\"a\":2}", ""),
                "the header is not valid JSON: duplicate key \"a\" at byte 7");
  check_corrupt(scratch, safetensors_bytes(std::string(100, '{'), ""),
                "the header is not valid JSON: expected a string key at byte 1");
  check_corrupt(scratch, safetensors_bytes("{\"a\":" + std::string(100, '[') + "]}", ""),
                "the header is not valid JSON: JSON nested too deeply");
  check_corrupt(scratch,
                safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[],"
                                  "\"data_offsets\":[0,99999999999999999999]}}",
                                  ""),
                "the header is not valid JSON: integer 99999999999999999999 out of range at "
                "byte 49");
}

BOOST_AUTO_TEST_CASE(bad_tensor_descriptions) {
  ScratchDir scratch;
  std::string four(4, '\0');
  check_corrupt(scratch, one_tensor("3", ""),
                "tensor 'a' must be described by an object, got an integer");
  check_corrupt(scratch, one_tensor("{\"shape\":[],\"data_offsets\":[0,4]}", four),
                "tensor 'a' has no \"dtype\"");
  check_corrupt(scratch, one_tensor("{\"dtype\":5,\"shape\":[],\"data_offsets\":[0,4]}", four),
                "tensor 'a': \"dtype\" is an integer");
  check_corrupt(scratch, one_tensor("{\"dtype\":\"Q8\",\"shape\":[],\"data_offsets\":[0,1]}", "x"),
                "tensor 'a' has unknown dtype 'Q8'");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"U16\",\"shape\":[],\"data_offsets\":[0,2]}", "xx"),
                "tensor 'a' has dtype U16, which kiln does not support");
  check_corrupt(scratch, one_tensor("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}", four),
                "tensor 'a' has no \"shape\"");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}", four),
                "tensor 'a': shape must hold non-negative integers, got an integer -1");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}", four),
                "tensor 'a': shape must hold non-negative integers, got a number");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
                           "\"data_offsets\":[0,4]}",
                           four),
                "tensor 'a' has a shape too large to address");
  // no bytes, but the strides of [0, 2^62, 2^62] overflow int64 (UBSan in empty())
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"U8\",\"shape\":[0,4611686018427387904,"
                           "4611686018427387904],\"data_offsets\":[0,0]}",
                           ""),
                "tensor 'a' has a shape too large to address: [0, 4611686018427387904, "
                "4611686018427387904] of U8 spans more than 2^63 - 1 bytes (counting each 0 as 1, "
                "for its strides) (the entry at byte 13 of the file) (the header is bytes [8, ");
  check_corrupt(scratch, one_tensor("{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0]}", four),
                "tensor 'a': data_offsets must be [begin, end], got 1 numbers");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[4,0]}", four),
                "tensor 'a' has data_offsets [4, 0] that end before they begin");
  check_corrupt(scratch, safetensors_bytes("{\"__metadata__\":[1]}", ""),
                "\"__metadata__\" must be an object, got an array");
  check_corrupt(scratch, safetensors_bytes("{\"__metadata__\":{\"k\":1}}", ""),
                "\"__metadata__\" value of \"k\" must be a string, got an integer");
}

BOOST_AUTO_TEST_CASE(size_mismatch) {
  ScratchDir scratch;
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}",
                           std::string(4, '\0')),
                "tensor 'a' of dtype F32 and shape [2] needs 8 bytes but its data_offsets [0, 4] "
                "hold 4");
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[0,"
                           "14]}",
                           std::string(14, '\0')),
                "tensor 'a' of dtype BF16 and shape [2, 3] needs 12 bytes");
}

BOOST_AUTO_TEST_CASE(offsets_out_of_range_overlapping_or_with_holes) {
  ScratchDir scratch;
  const std::string f32 = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":";
  check_corrupt(scratch, safetensors_bytes("{\"a\":" + f32 + "[4,8]}}", std::string(4, '\0')),
                "tensor 'a' has data_offsets [4, 8] beyond the 4 bytes of data in the file");
  check_corrupt(scratch,
                safetensors_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                  "\"b\":" +
                                      f32 + "[4,8]}}",
                                  std::string(8, '\0')),
                "tensors 'a' and 'b' overlap (data_offsets [0, 8] and [4, 8])");
  check_corrupt(scratch,
                safetensors_bytes("{\"a\":" + f32 + "[0,4]},\"b\":" + f32 + "[8,12]}}",
                                  std::string(12, '\0')),
                "bytes [4, 8) of the data belong to no tensor");
  check_corrupt(scratch, safetensors_bytes("{\"a\":" + f32 + "[4,8]}}", std::string(8, '\0')),
                "bytes [0, 4) of the data belong to no tensor");
  check_corrupt(scratch, safetensors_bytes("{\"a\":" + f32 + "[0,4]}}", std::string(9, '\0')),
                "the file has 5 bytes of data after the last tensor");
}

BOOST_AUTO_TEST_CASE(truncated_file) {
  ScratchDir scratch;
  std::string good = scratch.path("good.safetensors");
  save({{"a", ones({3})}, {"b", ones({5})}}, good);
  std::string bytes = read_bytes(good);
  for (size_t cut : {bytes.size() - 1, bytes.size() - 20, size_t{40}, size_t{12}, size_t{7}}) {
    std::string path = scratch.path("cut.safetensors");
    write_bytes(path, bytes.substr(0, cut));
    CHECK_ERROR(Error, load(path), "load: '" + path + "' is not a valid safetensors file: ");
  }
  write_bytes(scratch.path("cut.safetensors"), bytes.substr(0, bytes.size() - 1));
  CHECK_ERROR(Error, load(scratch.path("cut.safetensors")),
              "tensor 'b' has data_offsets [12, 32] beyond the 31 bytes of data in the file");
}

BOOST_AUTO_TEST_CASE(bool_bytes_other_than_0_or_1) {
  ScratchDir scratch;
  check_corrupt(scratch,
                one_tensor("{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}",
                           std::string("\x01\x02\x00", 3)),
                "BOOL tensor 'a' holds the byte 2 at element 1 (booleans are 0 or 1), byte 1 of "
                "the data");
}

BOOST_AUTO_TEST_CASE(optimizer_files_with_bad_metadata) {
  ScratchDir scratch;
  std::string path = scratch.path("sgd.safetensors");
  Tensor w = ones({2}).requires_grad_();
  optim::SGD sgd({w}, optim::SGDOptions(0.1));
  SafetensorsMetadata m = {{"kiln.optimizer", "SGD"},
                           {"param_groups", "1"},
                           {"param_groups.0.params", "0"},
                           {"param_groups.0.lr", "nan"}};
  save(NamedTensors{}, path, m);
  CHECK_ERROR(Error, load(sgd, path), "load: '" + path + "' is not a valid optimizer state file",
              "param_groups.0.lr is 'nan', not a number");
  m["param_groups"] = "99999999999999999999";
  save(NamedTensors{}, path, m);
  CHECK_ERROR(Error, load(sgd, path), "param_groups is '99999999999999999999', not a non-negative");
  BOOST_TEST(sgd.param_groups()[0].options().get_lr() == 0.1);
}

// Random byte changes and cuts of a valid file: every load succeeds or throws kiln::Error.
BOOST_AUTO_TEST_CASE(random_damage_never_crashes) {
  ScratchDir scratch;
  std::string good = scratch.path("good.safetensors");
  save({{"a", ones({2, 3})}, {"b", arange(5)}, {"c", zeros({4}, kBool)}}, good, {{"k", "v"}});
  const std::string bytes = read_bytes(good);
  std::string path = scratch.path("damaged.safetensors");
  std::mt19937 rng(1234);
  int errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string damaged = bytes;
    int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) {
      size_t at = rng() % damaged.size();
      damaged[at] = static_cast<char>(rng() % 256);
    }
    if (trial % 5 == 0) damaged.resize(rng() % damaged.size());
    write_bytes(path, damaged);
    try {
      load(path);
    } catch (const Error& e) {
      ++errors;
      BOOST_CHECK(contains(e.what(), "load: '" + path + "'"));
    }
  }
  BOOST_CHECK_GT(errors, 0);
}

BOOST_AUTO_TEST_SUITE_END()
