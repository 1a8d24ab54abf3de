// The profiler's reports: key_averages() and its table in PyTorch's layout, and the Chrome trace
// JSON (the Trace Event Format's complete events, which Perfetto and chrome://tracing open).
#include <kiln/error.h>
#include <kiln/profiler.h>
#include <kiln/util/string.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace kiln::profiler {
namespace {

std::string shapes_text(const std::vector<std::vector<int64_t>>& shapes) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out << ", ";
    out << "[";
    for (size_t j = 0; j < shapes[i].size(); ++j) out << (j ? ", " : "") << shapes[i][j];
    out << "]";
  }
  out << "]";
  return out.str();
}

// PyTorch's format_time: microseconds below a millisecond, then ms, then s; three decimals.
std::string format_time(double ns) {
  double us = ns / 1e3;
  char buf[64];
  if (us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3fs", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3fms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3fus", us);
  }
  return buf;
}

// PyTorch's format_memory: Gb, Mb, Kb or b, two decimals.
std::string format_memory(int64_t bytes) {
  const double kb = 1024.0, mb = kb * 1024, gb = mb * 1024;
  char buf[64];
  double b = static_cast<double>(bytes);
  double a = b < 0 ? -b : b;
  if (a >= gb) {
    std::snprintf(buf, sizeof buf, "%.2f Gb", b / gb);
  } else if (a >= mb) {
    std::snprintf(buf, sizeof buf, "%.2f Mb", b / mb);
  } else if (a >= kb) {
    std::snprintf(buf, sizeof buf, "%.2f Kb", b / kb);
  } else {
    std::snprintf(buf, sizeof buf, "%lld b", static_cast<long long>(bytes));
  }
  return buf;
}

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

void json_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\t': out << "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out << buf;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

}  // namespace

std::string KeyAverages::table(const std::string& sort_by, int row_limit) const {
  using Get = double (*)(const KeyAverage&);
  static const std::map<std::string, Get> keys = {
      {"self_cpu_time_total", [](const KeyAverage& r) { return double(r.self_cpu_time_total_ns); }},
      {"cpu_time_total", [](const KeyAverage& r) { return double(r.cpu_time_total_ns); }},
      {"cpu_time", [](const KeyAverage& r) { return r.cpu_time_avg_ns(); }},
      {"count", [](const KeyAverage& r) { return double(r.count); }},
      {"cpu_memory_usage", [](const KeyAverage& r) { return double(r.cpu_memory_usage); }},
      {"self_cpu_memory_usage",
       [](const KeyAverage& r) { return double(r.self_cpu_memory_usage); }},
  };
  auto it = keys.find(sort_by);
  if (it == keys.end()) {
    throw ValueError(detail::str(
        "key_averages().table: cannot sort by '", sort_by, "'; use one of self_cpu_time_total, ",
        "cpu_time_total, cpu_time, count, cpu_memory_usage, self_cpu_memory_usage"));
  }
  std::vector<KeyAverage> rows = rows_;
  Get get = it->second;
  std::stable_sort(rows.begin(), rows.end(),
                   [get](const KeyAverage& a, const KeyAverage& b) { return get(a) > get(b); });
  double self_total = 0;
  for (const KeyAverage& r : rows_) self_total += double(r.self_cpu_time_total_ns);
  if (row_limit >= 0 && rows.size() > static_cast<size_t>(row_limit)) {
    rows.resize(static_cast<size_t>(row_limit));
  }

  std::vector<std::string> header = {"Name",        "Self CPU %", "Self CPU",
                                     "CPU total %", "CPU total",  "CPU time avg"};
  if (memory_) {
    header.push_back("CPU Mem");
    header.push_back("Self CPU Mem");
  }
  header.push_back("# of Calls");
  if (by_shape_) header.push_back("Input Shapes");
  std::vector<std::vector<std::string>> cells;
  for (const KeyAverage& r : rows) {
    std::vector<std::string> c = {r.key,
                                  percent(double(r.self_cpu_time_total_ns), self_total),
                                  format_time(double(r.self_cpu_time_total_ns)),
                                  percent(double(r.cpu_time_total_ns), self_total),
                                  format_time(double(r.cpu_time_total_ns)),
                                  format_time(r.cpu_time_avg_ns())};
    if (memory_) {
      c.push_back(format_memory(r.cpu_memory_usage));
      c.push_back(format_memory(r.self_cpu_memory_usage));
    }
    c.push_back(std::to_string(r.count));
    if (by_shape_) c.push_back(r.input_shapes);
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(header.size(), 12);
  for (size_t i = 0; i < header.size(); ++i) width[i] = std::max(width[i], header[i].size());
  for (const auto& c : cells) {
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  }
  std::ostringstream out;
  auto line = [&] {
    for (size_t w : width) out << std::string(w, '-') << "  ";
    out << "\n";
  };
  auto row = [&](const std::vector<std::string>& c) {
    for (size_t i = 0; i < c.size(); ++i) {
      bool left = by_shape_ && i + 1 == c.size();  // the shapes column is left-aligned
      std::string pad(width[i] - c[i].size(), ' ');
      out << (left ? c[i] + pad : pad + c[i]) << "  ";
    }
    out << "\n";
  };
  line();
  row(header);
  line();
  for (const auto& c : cells) row(c);
  line();
  out << "Self CPU time total: " << format_time(self_total) << "\n";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const KeyAverages& averages) {
  return out << averages.table();
}

KeyAverages Profile::key_averages(bool group_by_input_shape) {
  stop();
  std::vector<KeyAverage> rows;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const Event& e : events_) {
    std::string shapes = group_by_input_shape ? shapes_text(e.input_shapes) : std::string();
    auto [it, added] = index.try_emplace({e.name, shapes}, rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().key = e.name;
      rows.back().input_shapes = shapes;
    }
    KeyAverage& r = rows[it->second];
    ++r.count;
    r.self_cpu_time_total_ns += e.self_ns;
    r.cpu_time_total_ns += e.duration_ns;
    r.cpu_memory_usage += e.bytes;
    r.self_cpu_memory_usage += e.self_bytes;
  }
  return KeyAverages(std::move(rows), group_by_input_shape, options_.profile_memory);
}

void Profile::export_chrome_trace(const std::string& path) {
  stop();
  std::ofstream file(path);
  KILN_CHECK(file.good(), "export_chrome_trace: cannot open '", path, "' for writing");
  file << "{\"traceEvents\": [";
  bool first = true;
  char num[64];
  for (const Event& e : events_) {
    file << (first ? "\n" : ",\n")
         << "  {\"ph\": \"X\", \"cat\": " << (e.user_range ? "\"user_annotation\"" : "\"cpu_op\"")
         << ", \"name\": ";
    first = false;
    json_string(file, e.name);
    std::snprintf(num, sizeof num, "%.3f", double(e.start_ns) / 1e3);
    file << ", \"pid\": 0, \"tid\": " << e.thread << ", \"ts\": " << num;
    std::snprintf(num, sizeof num, "%.3f", double(e.duration_ns) / 1e3);
    file << ", \"dur\": " << num << ", \"args\": {";
    file << "\"Input Dims\": " << shapes_text(e.input_shapes) << ", \"Input type\": [";
    for (size_t i = 0; i < e.input_dtypes.size(); ++i) {
      if (i) file << ", ";
      json_string(file, e.input_dtypes[i]);
    }
    file << "], \"Device\": ";
    json_string(file, e.device);
    file << ", \"Bytes\": " << e.bytes << ", \"Self Bytes\": " << e.self_bytes << "}}";
  }
  file << "\n], \"displayTimeUnit\": \"ms\"}\n";
  KILN_CHECK(file.good(), "export_chrome_trace: writing '", path, "' failed");
}

}  // namespace kiln::profiler
