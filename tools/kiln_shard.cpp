// kiln-shard: packs samples into tar shards of a target size (WebDataset layout), from any data
// source: a folder of files ("dir:"), other shards ("tar:", to re-shard), or a plugin's source.
//
//   kiln-shard --from dir:/data/images --out shards/train-%06d.tar --max-size 256M
//   kiln-shard --from "tar:old-{000..099}.tar" --out new-%04d.tar --max-count 5000 --shuffle 10000
//
// Fields are copied as bytes, undecoded. Prints each shard written and a summary.
#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

namespace fs = std::filesystem;

const char* kUsage =
    "usage: kiln-shard --from URL --out PATTERN [--max-size SIZE] [--max-count N]\n"
    "                  [--shuffle N] [--seed S]\n"
    "  --from URL       a data source: dir:/folder, tar:shards-{000..009}.tar, ...\n"
    "  --out PATTERN    shard file names with one %d conversion: out/train-%06d.tar\n"
    "  --max-size SIZE  bytes per shard (K, M, G suffixes; default 3G)\n"
    "  --max-count N    samples per shard (default 100000)\n"
    "  --shuffle N      shuffle through a buffer of N samples while packing\n"
    "  --seed S         the shuffle's seed (default 0)\n";

int64_t parse_size(const std::string& text) {
  size_t used = 0;
  double v = std::stod(text, &used);
  std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "K" || unit == "k") scale = 1024;
  if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
  if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
  if (!unit.empty() && scale == 1) throw std::invalid_argument("unknown size unit '" + unit + "'");
  if (v <= 0) throw std::invalid_argument("sizes must be positive");
  return static_cast<int64_t>(v * scale);
}

}  // namespace

int main(int argc, char** argv) {
  std::string from, out;
  int64_t max_size = int64_t{3} << 30, max_count = 100000, shuffle = 0;
  uint64_t seed = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--from") {
        from = value();
      } else if (a == "--out") {
        out = value();
      } else if (a == "--max-size") {
        max_size = parse_size(value());
      } else if (a == "--max-count") {
        max_count = std::stoll(value());
      } else if (a == "--shuffle") {
        shuffle = std::stoll(value());
      } else if (a == "--seed") {
        seed = std::stoull(value());
      } else if (a == "-h" || a == "--help") {
        std::cout << kUsage;
        return 0;
      } else {
        throw std::invalid_argument("unknown argument '" + a + "'");
      }
    }
    if (from.empty() || out.empty()) throw std::invalid_argument("--from and --out are required");
  } catch (const std::exception& e) {
    std::cerr << "kiln-shard: " << e.what() << "\n" << kUsage;
    return 2;
  }
  try {
    auto options = kiln::data::SourceOptions().decode(false).meta(true);
    if (shuffle > 1) options.shuffle(shuffle, shuffle).seed(seed);
    auto source = kiln::data::open(from, options);
    std::unique_ptr<kiln::data::SampleStream> stream = source->iter(kiln::data::WorkerInfo{});
    fs::path folder = fs::path(out).parent_path();
    if (!folder.empty()) fs::create_directories(folder);
    kiln::data::TarShardWriter writer(out, max_size, max_count);
    size_t reported = 0;
    int64_t bytes = 0;
    while (std::optional<kiln::data::Sample> s = stream->next()) {
      std::vector<std::pair<std::string, std::string>> fields;
      for (const auto& [name, value] : s->map()) {
        if (name == "__key__" || name == "__url__") continue;
        const kiln::Tensor& t = value.tensor();  // undecoded: the member's bytes
        fields.emplace_back(name, std::string(static_cast<const char*>(t.data_ptr()), t.nbytes()));
        bytes += static_cast<int64_t>(t.nbytes());
      }
      writer.write(s->at("__key__").str(), fields);
      for (; reported < writer.shards().size(); ++reported) {
        std::cout << "wrote " << writer.shards()[reported] << "\n";
      }
    }
    writer.close();
    for (; reported < writer.shards().size(); ++reported) {
      std::cout << "wrote " << writer.shards()[reported] << "\n";
    }
    std::cout << "kiln-shard: " << writer.samples_written() << " samples, " << bytes
              << " bytes of fields, " << writer.shards().size() << " shards from "
              << source->shards().size() << " input shards\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kiln-shard: " << e.what() << "\n";
    return 1;
  }
}
