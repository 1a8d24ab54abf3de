// kiln's directory source plugin (kiln_dir.so): the "dir" data source, a folder of files grouped
// into samples by key, the layout of ImageDirectoryDataset in "Effective PyTorch":
//
//   kiln::data::open("dir:/data/images")                       every file under the folder
//   kiln::data::open("dir:/data/images?pattern=*.jpg&shard_size=64")
//
// Keys and fields follow the tar source's rules on the path relative to the folder
// ("train/cat/0001.jpg" -> key "train/cat/0001", field "jpg"): files are sorted by (key, field)
// and grouped by key. So that workers and ranks can split the folder, it is cut into shards of
// shard_size samples (100 by default), named "<item>#<n>". `pattern` (fnmatch) filters file names.
#include <kiln/sdk/source.hpp>

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct File {
  std::string key, extension, path;
};

struct Listing {
  std::string root;
  std::vector<File> files;            // sorted by (key, extension)
  std::vector<size_t> sample_starts;  // index of each sample's first file, then files.size()
  int64_t shard_size = 100;
  int64_t samples() const { return static_cast<int64_t>(sample_starts.size()) - 1; }
  // (without samples + shard_size - 1, which overflows for a huge shard_size)
  int64_t shards() const { return samples() / shard_size + (samples() % shard_size != 0); }
};

// The value of option `name` as a positive integer, or an error naming the option.
int64_t positive_option(const std::string& name, const std::string& value) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size() || v <= 0) {
    throw std::invalid_argument("option " + name + "='" + value + "' is not a positive " +
                                "integer below 2^63 (write " + name + "=N, e.g. " + name + "=64)");
  }
  return v;
}

// "folder?pattern=*.jpg&shard_size=64" -> folder, pattern, shard_size.
void parse_item(const std::string& item, std::string& folder, std::string& pattern,
                int64_t& shard_size) {
  size_t q = item.find('?');
  folder = item.substr(0, q);
  if (q == std::string::npos) return;
  std::string query = item.substr(q + 1);
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    std::string kv = query.substr(start, amp == std::string::npos ? amp : amp - start);
    size_t eq = kv.find('=');
    std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (k == "pattern") {
      pattern = v;
    } else if (k == "shard_size") {
      shard_size = positive_option(k, v);
    } else if (!k.empty()) {
      throw std::invalid_argument("unknown option '" + k + "' (pattern, shard_size)");
    }
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
}

// The tar source's rules (WebDataset's), on the path relative to the folder.
bool split_name(const std::string& name, std::string& key, std::string& ext) {
  size_t slash = name.find('/');
  std::string first = name.substr(0, slash);
  if (first.size() >= 4 && first.compare(0, 2, "__") == 0 &&
      first.compare(first.size() - 2, 2, "__") == 0) {
    return false;  // metadata
  }
  size_t last = name.rfind('/');
  size_t base = last == std::string::npos ? 0 : last + 1;
  size_t dot = name.find('.', base);
  if (dot == std::string::npos || dot == base) return false;
  key = name.substr(0, dot);
  ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return true;
}

std::shared_ptr<const Listing> list(const std::string& item) {
  auto l = std::make_shared<Listing>();
  std::string pattern;
  parse_item(item, l->root, pattern, l->shard_size);
  fs::path root(l->root);
  if (!fs::is_directory(root)) throw std::runtime_error("'" + l->root + "' is not a folder");
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), root).generic_string();
    if (!pattern.empty() && fnmatch(pattern.c_str(), e.path().filename().c_str(), 0) != 0) {
      continue;
    }
    File f;
    if (!split_name(rel, f.key, f.extension)) continue;
    f.path = e.path().string();
    l->files.push_back(std::move(f));
  }
  std::sort(l->files.begin(), l->files.end(), [](const File& a, const File& b) {
    return a.key != b.key ? a.key < b.key : a.extension < b.extension;
  });
  for (size_t i = 0; i < l->files.size(); ++i) {
    if (i == 0 || l->files[i].key != l->files[i - 1].key) l->sample_starts.push_back(i);
  }
  l->sample_starts.push_back(l->files.size());
  return l;
}

// Listings by item: made by list_shards (the main thread), read by the workers' open_shard.
std::mutex g_mutex;
std::map<std::string, std::shared_ptr<const Listing>>& cache() {
  static auto* c = new std::map<std::string, std::shared_ptr<const Listing>>();
  return *c;
}

std::shared_ptr<const Listing> listing(const std::string& item) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = cache().find(item);
    if (it != cache().end()) return it->second;
  }
  auto l = list(item);
  std::lock_guard<std::mutex> lock(g_mutex);
  return cache().emplace(item, l).first->second;
}

struct DirReader {
  // "<item>#<n>": the n-th shard_size samples of the item's listing.
  explicit DirReader(const std::string& shard) {
    size_t hash = shard.rfind('#');
    if (hash == std::string::npos) throw std::invalid_argument("not a dir shard name: " + shard);
    std::string number = shard.substr(hash + 1);
    int64_t index = -1;
    auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), index);
    if (number.empty() || ec != std::errc() || p != number.data() + number.size()) {
      throw std::invalid_argument("not a dir shard name (\"<folder>#<n>\"): " + shard);
    }
    listing = ::listing(shard.substr(0, hash));
    if (index < 0 || index >= listing->shards()) {
      throw std::out_of_range("shard " + std::to_string(index) + " does not exist");
    }
    // index < shards, so index * shard_size < samples: no overflow
    int64_t first = index * listing->shard_size;
    sample = static_cast<size_t>(first);
    end = static_cast<size_t>(first + std::min(listing->samples() - first, listing->shard_size));
  }

  int32_t next(kiln_sample& out);

  std::shared_ptr<const Listing> listing;
  size_t sample = 0, end = 0;  // sample indices
  std::vector<std::vector<uint8_t>> data;
  std::vector<kiln_field> fields;
  std::string key;
};

int32_t DirReader::next(kiln_sample& out) {
  if (sample >= end) return KILN_SAMPLE_END;
  const Listing& l = *listing;
  size_t first = l.sample_starts[sample], last = l.sample_starts[sample + 1];
  ++sample;
  size_t n = last - first;
  if (data.size() < n) data.resize(n);
  fields.resize(n);
  key = l.files[first].key;
  for (size_t i = 0; i < n; ++i) {
    const File& f = l.files[first + i];
    if (i > 0 && f.extension == l.files[first + i - 1].extension) {
      kiln::sdk::set_error("member '" + f.path + "': duplicate field '" + f.extension +
                           "' in sample '" + f.key + "'");
      return KILN_SAMPLE_SKIP;
    }
    std::ifstream in(f.path, std::ios::binary | std::ios::ate);
    if (!in) {
      kiln::sdk::set_error("member '" + f.path + "': cannot read the file");
      return KILN_SAMPLE_SKIP;
    }
    auto size = static_cast<size_t>(in.tellg());
    std::vector<uint8_t>& buf = data[i];
    buf.resize(size);
    in.seekg(0);
    if (size > 0 &&
        !in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(size))) {
      kiln::sdk::set_error("member '" + f.path + "': short read");
      return KILN_SAMPLE_SKIP;
    }
    fields[i] = kiln_field{f.extension.c_str(), buf.data(), size, 0};
  }
  out.key = key.c_str();
  out.fields = fields.data();
  out.n_fields = static_cast<int32_t>(n);
  out.offset = 0;
  return KILN_SAMPLE_OK;
}

struct DirSource {
  static constexpr const char* scheme = "dir";
  using Reader = DirReader;

  static void list_shards(const std::string& item, const kiln::sdk::EmitShard& emit) {
    std::shared_ptr<const Listing> l = list(item);  // fresh: the folder may have changed
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      cache()[item] = l;
    }
    for (int64_t i = 0; i < l->shards(); ++i) emit(item + "#" + std::to_string(i));
  }
};

}  // namespace

KILN_SOURCE_PLUGIN(DirSource, "dir", "0.1.0",
                   "data source \"dir\": a folder of files grouped into samples by key")
