// save then load gives back the same tensors, bit for bit: every dtype, non-contiguous inputs,
// 0-dim and empty tensors, metadata, names with escapes; saving is atomic and checks its input.
#include "serialize_test.h"

#include <limits>

#include <sys/stat.h>

using namespace kiln;
using namespace serialize_test;

namespace {

const ScalarType kAllDtypes[] = {kBool, kByte, kChar,     kShort, kInt,
                                 kLong, kHalf, kBFloat16, kFloat, kDouble};

// A [3, 5] tensor of dtype t with varied values (negative, fractional, large where t allows).
Tensor sample(ScalarType t) {
  Tensor v = randn({3, 5}, kDouble) * 1000;
  if (t == kBool) return v > 0;
  if (t == kByte) return remainder(v.abs(), 256).to(kByte);
  if (t == kChar) return (remainder(v, 200) - 100).to(kChar);
  if (t == kLong) return (v * 1e12).to(kLong);
  return v.to(t);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(roundtrip)

BOOST_AUTO_TEST_CASE(every_dtype) {
  ScratchDir scratch;
  manual_seed(7);
  NamedTensors tensors;
  for (ScalarType t : kAllDtypes) tensors.emplace_back(dtype_name(t), sample(t));
  save(tensors, scratch.path("all.safetensors"));
  NamedTensors loaded = load(scratch.path("all.safetensors"));
  BOOST_REQUIRE_EQUAL(loaded.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    BOOST_TEST_CONTEXT(tensors[i].first) {
      BOOST_CHECK_EQUAL(loaded[i].first, tensors[i].first);  // the given order
      BOOST_CHECK(same_bits(loaded[i].second, tensors[i].second));
      BOOST_CHECK(loaded[i].second.is_cpu());
      BOOST_CHECK(loaded[i].second.is_contiguous());
    }
  }
}

BOOST_AUTO_TEST_CASE(special_float_values) {
  ScratchDir scratch;
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  Tensor f = tensor({nan, inf, -inf, -0.0f, 1e-45f, 3.4028235e38f});
  for (ScalarType t : {kHalf, kBFloat16, kFloat, kDouble}) {
    save({{"x", f.to(t)}}, scratch.path("special.safetensors"));
    BOOST_CHECK(same_bits(load(scratch.path("special.safetensors")).at(0).second, f.to(t)));
  }
}

BOOST_AUTO_TEST_CASE(non_contiguous_inputs) {
  ScratchDir scratch;
  Tensor base = arange(60, kFloat).reshape({3, 4, 5});
  NamedTensors tensors = {
      {"transposed", base.transpose(0, 2)},
      {"strided", base.slice(2, 0, 5, 2)},
      {"narrowed", base.narrow(1, 1, 2)},  // starts at an offset in the storage
      {"selected", base.select(1, 3)},
      {"expanded", arange(3, kInt).unsqueeze(1).expand({3, 4})},  // stride 0
      {"permuted_bool", (base > 30).permute({2, 0, 1})},
  };
  for (const auto& [name, t] : tensors) BOOST_REQUIRE(!t.is_contiguous());
  save(tensors, scratch.path("views.safetensors"));
  NamedTensors loaded = load(scratch.path("views.safetensors"));
  BOOST_REQUIRE_EQUAL(loaded.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    BOOST_TEST_CONTEXT(tensors[i].first) {
      BOOST_CHECK(same_bits(loaded[i].second, tensors[i].second.contiguous()));
    }
  }
}

BOOST_AUTO_TEST_CASE(zero_dim_empty_and_no_tensors) {
  ScratchDir scratch;
  save({{"scalar", tensor(2.5)}, {"empty", zeros({2, 0, 3}, kLong)}, {"long", tensor(int64_t{7})}},
       scratch.path("small.safetensors"));
  NamedTensors loaded = load(scratch.path("small.safetensors"));
  BOOST_REQUIRE_EQUAL(loaded.size(), 3u);
  BOOST_CHECK_EQUAL(loaded[0].second.dim(), 0);
  BOOST_CHECK_EQUAL(loaded[0].second.item<double>(), 2.5);
  BOOST_CHECK(same_bits(loaded[1].second, zeros({2, 0, 3}, kLong)));
  BOOST_CHECK_EQUAL(loaded[2].second.item<int64_t>(), 7);

  save(NamedTensors{}, scratch.path("none.safetensors"));
  BOOST_CHECK(load(scratch.path("none.safetensors")).empty());
  BOOST_CHECK_EQUAL(read_bytes(scratch.path("none.safetensors")).size(), 16u);  // "{}" padded
}

BOOST_AUTO_TEST_CASE(metadata_and_names_with_escapes) {
  ScratchDir scratch;
  std::string odd = "a \"quoted\" \\ name\twith\ncontrol \x01 and UTF-8 \xc3\xa9\xf0\x9f\x98\x80";
  SafetensorsMetadata metadata = {{"format", "pt"}, {odd, odd}, {"empty", ""}};
  save({{odd, ones({2})}, {"", zeros({1})}}, scratch.path("names.safetensors"), metadata);
  SafetensorsContents contents = load_safetensors(scratch.path("names.safetensors"));
  BOOST_REQUIRE_EQUAL(contents.tensors.size(), 2u);
  BOOST_CHECK_EQUAL(contents.tensors[0].first, odd);
  BOOST_CHECK_EQUAL(contents.tensors[1].first, "");
  BOOST_CHECK(contents.metadata == metadata);
}

BOOST_AUTO_TEST_CASE(map_and_braced_overloads) {
  ScratchDir scratch;
  std::map<std::string, Tensor> by_name = {{"b", ones({1})}, {"a", zeros({2})}};
  save(by_name, scratch.path("map.safetensors"));
  NamedTensors loaded = load(scratch.path("map.safetensors"));
  BOOST_REQUIRE_EQUAL(loaded.size(), 2u);
  BOOST_CHECK_EQUAL(loaded[0].first, "a");  // name order
  BOOST_CHECK_EQUAL(loaded[1].first, "b");
  save({{"w", full({2, 2}, 3.0f)}}, scratch.path("braced.safetensors"));
  BOOST_CHECK(same_bits(load(scratch.path("braced.safetensors")).at(0).second, full({2, 2}, 3.0f)));
}

BOOST_AUTO_TEST_CASE(tensors_that_require_grad) {
  ScratchDir scratch;
  Tensor w = ones({3}).requires_grad_();
  Tensor y = w * 2;
  save({{"w", w}, {"y", y}}, scratch.path("grad.safetensors"));
  NamedTensors loaded = load(scratch.path("grad.safetensors"));
  BOOST_CHECK(!loaded[0].second.requires_grad());
  BOOST_CHECK(same_bits(loaded[1].second, full({3}, 2.0f)));
}

BOOST_AUTO_TEST_CASE(overwrites_atomically_and_leaves_no_temporary) {
  ScratchDir scratch;
  std::string path = scratch.path("model.safetensors");
  save({{"x", zeros({4})}}, path);
  save({{"x", ones({4})}, {"y", ones({1})}}, path);
  NamedTensors loaded = load(path);
  BOOST_REQUIRE_EQUAL(loaded.size(), 2u);
  BOOST_CHECK(same_bits(loaded[0].second, ones({4})));
  BOOST_CHECK(scratch.files() == std::vector<std::string>{"model.safetensors"});
  // Permissions as a plain open() would give (0666 less the umask), not mkstemp's 0600.
  mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::stat(path.c_str(), &st), 0);
  BOOST_CHECK_EQUAL(st.st_mode & 0777, 0666 & ~mask);
}

BOOST_AUTO_TEST_CASE(save_errors) {
  ScratchDir scratch;
  std::string path = scratch.path("bad.safetensors");
  CHECK_ERROR(ValueError, save({{"a", ones({1})}, {"b", Tensor()}}, path),
              "save: tensor 'b' is undefined (writing '" + path + "')");
  CHECK_ERROR(ValueError, save({{"a", ones({1})}, {"a", ones({1})}}, path),
              "save: two tensors are named 'a'");
  CHECK_ERROR(ValueError, save({{"__metadata__", ones({1})}}, path),
              "save: \"__metadata__\" is reserved by the format and cannot name a tensor");
  std::string missing_dir = scratch.path("no/such/dir/x.safetensors");
  CHECK_ERROR(Error, save({{"a", ones({1})}}, missing_dir),
              "save: cannot write '" + missing_dir + "': cannot create '");
  CHECK_ERROR(Error, save({{"a", ones({1})}}, missing_dir), "No such file or directory");
  // The target is a directory: the rename fails and the temporary file is removed.
  std::filesystem::create_directory(scratch.path("a_directory"));
  CHECK_ERROR(Error, save({{"a", ones({1})}}, scratch.path("a_directory")),
              "save: cannot write '" + scratch.path("a_directory") + "': rename from '");
  BOOST_CHECK(scratch.files() == std::vector<std::string>{"a_directory"});
}

BOOST_AUTO_TEST_SUITE_END()
