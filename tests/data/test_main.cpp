// The test_data executable: kiln::data (samples, collation, samplers, the DataLoader, resumption,
// the tar and dir sources, decoders, the shard writer), one suite per file; and the helpers of
// data_test.h.
#define BOOST_TEST_MODULE data
#include <boost/test/unit_test.hpp>

#include "data_test.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace data_test {

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06d", i);
  return buf;
}

std::string write_shards(const TempDir& dir, int shards, int per_shard, int bin_bytes,
                         const std::string& stem) {
  kiln::data::TarShardWriter writer(dir / (stem + "-%06d.tar"), int64_t{1} << 40, per_shard);
  for (int i = 0; i < shards * per_shard; ++i) {
    std::string bin(static_cast<size_t>(bin_bytes), static_cast<char>(i % 251));
    writer.write(key_of(i), {{"cls", std::to_string(i % 10)},
                             {"txt", "sample " + std::to_string(i)},
                             {"bin", bin}});
  }
  writer.close();
  BOOST_REQUIRE_EQUAL(static_cast<int>(writer.shards().size()), shards);
  char last[16];
  std::snprintf(last, sizeof last, "%06d", shards - 1);
  return dir / (stem + "-{000000.." + last + "}.tar");
}

void collect_keys(const kiln::data::Sample& batch, std::vector<std::string>& keys) {
  for (const kiln::data::Sample& k : batch.at("__key__").list()) keys.push_back(k.str());
}

std::vector<std::string> epoch_keys(kiln::data::DataLoader& loader) {
  std::vector<std::string> keys;
  for (kiln::data::Sample& batch : loader) collect_keys(batch, keys);
  return keys;
}

std::map<std::string, int> count(const std::vector<std::string>& keys) {
  std::map<std::string, int> out;
  for (const std::string& k : keys) out[k] += 1;
  return out;
}

std::string tar_bytes(const std::vector<RawMember>& members) {
  std::string out;
  for (const RawMember& m : members) {
    std::string h(512, '\0');
    std::memcpy(&h[0], m.name.data(), std::min<size_t>(m.name.size(), 100));
    std::snprintf(&h[100], 8, "%07o", 0644);
    std::snprintf(&h[108], 8, "%07o", 0);
    std::snprintf(&h[116], 8, "%07o", 0);
    std::snprintf(&h[124], 12, "%011llo", static_cast<unsigned long long>(m.data.size()));
    std::snprintf(&h[136], 12, "%011o", 0);
    h[156] = m.type;
    std::memcpy(&h[257], "ustar", 6);
    std::memcpy(&h[263], "00", 2);
    std::memset(&h[148], ' ', 8);
    unsigned sum = 0;
    for (char c : h) sum += static_cast<unsigned char>(c);
    std::snprintf(&h[148], 8, "%06o", sum);
    out += h;
    out += m.data;
    out.append((512 - m.data.size() % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  BOOST_REQUIRE(out.good());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<kiln::data::Sample> read_all(const std::string& url,
                                         kiln::data::SourceOptions options) {
  auto ds = kiln::data::open(url, std::move(options));
  std::unique_ptr<kiln::data::SampleStream> s = ds->iter(kiln::data::WorkerInfo{});
  std::vector<kiln::data::Sample> out;
  while (std::optional<kiln::data::Sample> x = s->next()) out.push_back(std::move(*x));
  return out;
}

std::vector<int64_t> ints(const kiln::Tensor& t) {
  kiln::Tensor c = t.to(kiln::kLong).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

std::shared_ptr<kiln::data::Dataset> numbers(int64_t n) {
  return std::make_shared<kiln::data::LambdaDataset>(n, [](int64_t i) {
    return kiln::data::Sample(kiln::data::Sample::Map{{"i", i}});
  });
}

std::unique_ptr<kiln::data::SampleStream> Strided40::iter(const kiln::data::WorkerInfo& w) {
  struct Stream : kiln::data::SampleStream {
    int64_t i, step;
    Stream(int64_t first, int64_t s) : i(first), step(s) {}
    std::optional<kiln::data::Sample> next() override {
      if (i >= 40) return std::nullopt;
      kiln::data::Sample s = kiln::data::Sample::Map{{"i", i}};
      i += step;
      return s;
    }
  };
  return std::make_unique<Stream>(w.id, w.num_workers);
}

}  // namespace data_test
