// The "csv" data source: rows of CSV files become samples of numbers.
//
//   x,y                                  kiln::data::open("csv:points-{0..3}.csv")
//   0.5,4.25                       ->    sample {"__key__": "points-0/2", "x.f32": 0.5,
//   "y.f32": 4.25}
//
// A shard is one file whose first line names the columns (lower-case letters, digits, '_').
// Each further non-empty line is a sample keyed "<file stem>/<line number>" with one field per
// column, "<column>.f32", holding the cell's text. The plugin also registers the decoder of the
// extension "f32", which turns such text into a float32 scalar tensor, so a DataLoader batches a
// column into a float32 tensor [batch]. A row with the wrong number of cells is skipped with an
// error (the core applies the user's error policy); a cell that is not a number fails to decode.
#include <kiln/sdk/source.hpp>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// "a,b,,c" -> {"a", "b", "", "c"} as (begin, length) pairs into the line.
std::vector<std::pair<size_t, size_t>> split_cells(const std::string& line) {
  std::vector<std::pair<size_t, size_t>> cells;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    size_t end = comma == std::string::npos ? line.size() : comma;
    cells.emplace_back(start, end - start);
    if (comma == std::string::npos) return cells;
    start = comma + 1;
  }
}

bool valid_column(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

// One open CSV file.
class CsvReader {
 public:
  explicit CsvReader(const std::string& shard) : in_(shard, std::ios::binary) {
    if (!in_) throw std::runtime_error(std::strerror(errno));  // the core says "cannot open"
    stem_ = std::filesystem::path(shard).stem().string();
    std::string header;
    if (!read_line(header)) throw std::runtime_error("'" + shard + "' is empty: no header line");
    for (auto [begin, size] : split_cells(header)) {
      std::string name = header.substr(begin, size);
      if (!valid_column(name)) {
        throw std::runtime_error("header of '" + shard + "': column name '" + name +
                                 "' is not "
                                 "lower-case letters, digits and '_'");
      }
      names_.push_back(name + ".f32");
    }
  }

  int32_t next(kiln_sample& out) {
    do {
      offset_ = next_offset_;
      if (!read_line(line_)) return KILN_SAMPLE_END;
    } while (line_.empty());
    key_ = stem_ + "/" + std::to_string(line_number_);
    auto cells = split_cells(line_);
    if (cells.size() != names_.size()) {
      kiln::sdk::set_error("line " + std::to_string(line_number_) + " at byte offset " +
                           std::to_string(offset_) + ": " + std::to_string(cells.size()) +
                           " cells, but the header names " + std::to_string(names_.size()) +
                           " columns");
      return KILN_SAMPLE_SKIP;
    }
    fields_.clear();
    for (size_t i = 0; i < cells.size(); ++i) {
      fields_.push_back(kiln_field{names_[i].c_str(), line_.data() + cells[i].first,
                                   cells[i].second, offset_ + cells[i].first});
    }
    out.key = key_.c_str();
    out.fields = fields_.data();
    out.n_fields = static_cast<int32_t>(fields_.size());
    out.offset = offset_;
    return KILN_SAMPLE_OK;
  }

 private:
  // The next line without its "\n" or "\r\n"; false at the end of the file.
  bool read_line(std::string& line) {
    if (!std::getline(in_, line)) return false;
    next_offset_ += line.size() + 1;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  std::ifstream in_;
  std::string stem_, line_, key_;
  std::vector<std::string> names_;  // "<column>.f32"
  std::vector<kiln_field> fields_;  // point into line_ until the next next()
  uint64_t offset_ = 0, next_offset_ = 0;
  int64_t line_number_ = 0;
};

struct CsvSource {
  static constexpr const char* scheme = "csv";
  using Reader = CsvReader;
  // The sample corpus kiln-plugin-check reads through the source and fuzzes from.
  static std::vector<std::string> sample_shards() {
    return {"x,y\n0.5,4.25\n-1,2e3\n", "a,b,c\r\n1,2,3\r\n\r\n4,5,6\r\n"};
  }
};

// Decodes the text of a ".f32" field into a float32 scalar tensor.
kiln_status decode_f32(const void* data, uint64_t size, const char* name,
                       const kiln_decode_out* out, void* /*user*/) {
  std::string text(static_cast<const char*>(data), size);
  const char* begin = text.c_str();
  char* end = nullptr;
  float value = std::strtof(begin, &end);
  while (end != nullptr && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (text.empty() || end == begin || *end != '\0') {
    kiln::sdk::set_error(std::string("field '") + name + "': '" + text + "' is not a number");
    return 1;
  }
  void* p = out->tensor(out->ctx, KILN_F32, 0, nullptr);
  if (p == nullptr) return 1;  // the core has set the error
  *static_cast<float*>(p) = value;
  return 0;
}

}  // namespace

extern "C" {

KILN_PLUGIN_EXPORT const kiln_plugin_info* kiln_plugin_query(void) {
  static const kiln_plugin_info info = {
      sizeof(kiln_plugin_info),
      KILN_ABI_MAJOR,
      KILN_ABI_MINOR,
      "csv",
      "0.1.0",
      "data source \"csv\": rows of CSV files, cells decoded as float32 (\".f32\")"};
  return &info;
}

KILN_PLUGIN_EXPORT int32_t kiln_plugin_probe(const kiln_host* host) {
  return kiln::sdk::probe_source_interface(host);  // data sources and decoders came in ABI 1.1
}

// A source alone would be KILN_SOURCE_PLUGIN(CsvSource, "csv", ...); this one adds a decoder.
KILN_PLUGIN_EXPORT kiln_status kiln_plugin_init(const kiln_host* host) {
  if (kiln::sdk::register_source<CsvSource>(host) != 0) return 1;
  return host->register_decoder("f32", decode_f32, nullptr);
}

}  // extern "C"

// The checks kiln-plugin-check runs: the sample corpus above and the fuzz harness (source.hpp).
KILN_SOURCE_CHECKS(CsvSource)
