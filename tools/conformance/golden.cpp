// Reads tests/golden/conformance_cases.txt and the other conformance_*_cases.txt (format:
// make_conformance_golden.py's docstring).
#include "golden.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace conformance {
namespace {

ScalarType parse_dtype(const std::string& name) {
  for (ScalarType d : kAll) {
    if (name == kiln::dtype_name(d)) return d;
  }
  throw std::runtime_error("unknown dtype '" + name + "'");
}

double parse_number(const std::string& word) {
  char* end = nullptr;
  double v = std::strtod(word.c_str(), &end);
  if (end == word.c_str() || *end != '\0') throw std::runtime_error("bad number '" + word + "'");
  return v;
}

// "<dtype> <ndim> <sizes...> <values...>"
Tensor parse_tensor(std::istringstream& in) {
  std::string word;
  in >> word;
  ScalarType dtype = parse_dtype(word);
  int64_t ndim = -1;
  in >> ndim;
  if (ndim < 0) throw std::runtime_error("bad tensor rank");
  std::vector<int64_t> sizes(static_cast<size_t>(ndim));
  int64_t numel = 1;
  for (int64_t& s : sizes) {
    in >> s;
    numel *= s;
  }
  std::vector<double> v;
  while (in >> word) v.push_back(parse_number(word));
  if (static_cast<int64_t>(v.size()) != numel) {
    throw std::runtime_error("expected " + std::to_string(numel) + " values, got " +
                             std::to_string(v.size()));
  }
  return values(sizes, v, dtype);
}

std::optional<kiln::Scalar> parse_scalar(std::istringstream& in) {
  std::string kind, word;
  in >> kind;
  if (kind == "none") return std::nullopt;
  in >> word;
  if (kind == "bool") return kiln::Scalar(word == "1");
  if (kind == "int") return kiln::Scalar(static_cast<int64_t>(std::stoll(word)));
  if (kind == "float") return kiln::Scalar(parse_number(word));
  throw std::runtime_error("unknown scalar kind '" + kind + "'");
}

std::vector<GoldenRecord> load(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open the golden file " + path);
  std::vector<GoldenRecord> records;
  GoldenRecord current;
  bool open = false;
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string key;
    in >> key;
    try {
      if (key == "case") {
        if (open) throw std::runtime_error("'case' before 'end'");
        current = GoldenRecord();
        in >> current.name >> current.label;
        current.line = number;
        open = true;
      } else if (!open) {
        throw std::runtime_error("'" + key + "' outside a case");
      } else if (key == "in") {
        current.args.tensors.push_back(parse_tensor(in));
      } else if (key == "out") {
        current.expected.push_back(parse_tensor(in));
      } else if (key == "scalar") {
        current.args.scalars.push_back(parse_scalar(in));
      } else if (key == "int") {
        int64_t v = 0;
        in >> v;
        current.args.ints.push_back(v);
      } else if (key == "dtype") {
        std::string name;
        in >> name;
        current.args.dtypes.push_back(parse_dtype(name));
      } else if (key == "end") {
        records.push_back(std::move(current));
        open = false;
      } else {
        throw std::runtime_error("unknown keyword '" + key + "'");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (open) throw std::runtime_error(path + ": the last case has no 'end'");
  return records;
}

}  // namespace

std::string golden_dir() {
  if (const char* dir = std::getenv("KILN_GOLDEN_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return KILN_GOLDEN_DIR;
}

std::string golden_file() { return golden_dir() + "/conformance_cases.txt"; }

// conformance_cases.txt, then the other conformance_*_cases.txt files in name order (families
// that write their records with their own script, such as make_sort_golden.py).
const std::vector<GoldenRecord>& golden_records() {
  static const std::vector<GoldenRecord> records = [] {
    std::vector<GoldenRecord> all = load(golden_file());
    std::vector<std::string> more;
    for (const auto& entry : std::filesystem::directory_iterator(golden_dir())) {
      std::string name = entry.path().filename().string();
      if (name != "conformance_cases.txt" && name.starts_with("conformance_") &&
          name.ends_with("_cases.txt")) {
        more.push_back(entry.path().string());
      }
    }
    std::sort(more.begin(), more.end());
    for (const std::string& path : more) {
      std::vector<GoldenRecord> records = load(path);
      all.insert(all.end(), records.begin(), records.end());
    }
    return all;
  }();
  return records;
}

}  // namespace conformance
