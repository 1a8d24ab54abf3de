// kiln-info: what this kiln can do here. Prints the core's plugin ABI, the folders searched for
// plugins, each plugin file with its state (and why, when it did not load), the devices, the
// communication backends (and why one is unavailable), and for each operator the device types
// that have a kernel for it.
//
//   kiln-info [--plugin FILE]... [--json]
//   kiln-info --update-primitives-doc docs/primitives.md
//
// --plugin loads FILE before the search (repeatable); --json prints one JSON object instead.
// --update-primitives-doc rewrites the doc's generated table from the registry when it changed
// (the build's kiln_primitives_doc target runs it; See Note [Generated primitive rows]).
#include <kiln/kiln.h>
#include <kiln/primitive_docs.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<std::string> plugin_files;
  bool json = false;
  std::string primitives_doc;  // --update-primitives-doc
};

struct OperatorRow {
  std::string name;
  bool composite = false;                 // written in core: runs on every device
  std::vector<std::string> kernel_types;  // device types with a plugin kernel
};

struct Report {
  std::vector<std::string> search_path;
  std::vector<kiln::PluginInfo> plugins;
  std::vector<std::pair<std::string, std::string>> devices;  // "cpu:0", its description
  std::vector<kiln::distributed::CommBackendInfo> comm_backends;
  std::vector<OperatorRow> operators;
};

const char* kUsage =
    "usage: kiln-info [--plugin FILE]... [--json]\n"
    "       kiln-info --update-primitives-doc FILE\n"
    "  --plugin FILE  load this plugin file before searching the plugin folders (repeatable)\n"
    "  --json         print the report as one JSON object\n"
    "  --update-primitives-doc FILE  rewrite the generated table of FILE (docs/primitives.md)\n"
    "                 from the operator registry, if it changed\n";

// Rewrites the generated rows of `path` when they differ from the registry's; the file is
// replaced by a rename, so a concurrent build never reads half of it.
int update_primitives_doc(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "kiln-info: --update-primitives-doc: cannot read " << path << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string updated = kiln::with_generated_primitive_rows(doc);
  if (updated == doc) return 0;
  const std::string temp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary);
    out << updated;
    if (!out.flush()) {
      std::cerr << "kiln-info: --update-primitives-doc: cannot write " << temp << "\n";
      return 1;
    }
  }
  std::filesystem::rename(temp, path);
  std::cout << "kiln-info: updated the generated table of " << path << "\n";
  return 0;
}

Report gather(const Options& options) {
  for (const std::string& file : options.plugin_files) kiln::load_plugin(file);
  kiln::load_plugins();
  Report r;
  r.search_path = kiln::plugin_search_path();
  r.plugins = kiln::plugins();
  for (const kiln::Device& d : kiln::devices()) {
    std::string description;
    try {
      description = kiln::device_description(d);
    } catch (const kiln::Error& e) {  // a plugin's describe failed: the rest of the report stands
      description = std::string("(no description: ") + e.what() + ")";
    }
    r.devices.emplace_back(d.str(), description);
  }
  r.comm_backends = kiln::distributed::comm_backends();
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    OperatorRow row{op->name(), !op->is_primitive(), {}};
    const kiln::OperatorBase* kernels = op->functional();  // add_ runs add's kernels
    for (int t = 0; t < kiln::kMaxDeviceTypes; ++t) {
      auto type = static_cast<kiln::DeviceType>(t);
      if (kernels->has_plugin_kernel(type)) {
        row.kernel_types.push_back(kiln::device_type_name(type));
      }
    }
    r.operators.push_back(std::move(row));
  }
  std::sort(r.operators.begin(), r.operators.end(),
            [](const OperatorRow& a, const OperatorRow& b) { return a.name < b.name; });
  return r;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string kernels_text(const OperatorRow& op) {
  if (op.composite) {
    std::string text = "composite (all devices)";
    if (!op.kernel_types.empty()) text += "; fused kernel on: " + join(op.kernel_types);
    return text;
  }
  return op.kernel_types.empty() ? "no kernel on any loaded device" : join(op.kernel_types);
}

void print_text(const Report& r) {
  std::cout << "kiln core: plugin ABI " << kiln::core_abi_major() << "." << kiln::core_abi_minor()
            << "\n\nplugin search path, in order:\n";
  for (const std::string& dir : r.search_path) {
    std::error_code ec;
    std::cout << "  " << dir << (std::filesystem::exists(dir, ec) ? "" : "  (not found)") << "\n";
  }
  std::cout << "\nplugins (" << r.plugins.size() << "):\n";
  for (const kiln::PluginInfo& p : r.plugins) {
    std::cout << "  file:    " << p.path << "\n";
    if (!p.name.empty()) {
      std::cout << "    name:    " << p.name << "\n    version: " << p.version
                << "\n    abi:     " << p.abi_major << "." << p.abi_minor << "\n";
      if (!p.summary.empty()) std::cout << "    summary: " << p.summary << "\n";
    }
    std::cout << "    state:   " << kiln::plugin_state_name(p.state) << "\n";
    if (!p.reason.empty()) std::cout << "    reason:  " << p.reason << "\n";
    if (!p.devices.empty()) std::cout << "    devices: " << join(p.devices) << "\n";
  }
  std::cout << "\ndevices (" << r.devices.size() << "):\n";
  for (const auto& [device, description] : r.devices) {
    std::cout << "  " << device << "  " << description << "\n";
  }
  std::cout << "\ncommunication backends (" << r.comm_backends.size() << "):\n";
  for (const kiln::distributed::CommBackendInfo& b : r.comm_backends) {
    std::cout << "  " << b.name << "  "
              << (b.available ? "available (" + b.plugin + ")" : "unavailable: " + b.reason)
              << "\n";
  }
  std::cout << "\noperators (" << r.operators.size() << "): device types with a kernel\n";
  for (const OperatorRow& op : r.operators) {
    std::string name = op.name;
    name.resize(std::max<size_t>(name.size(), 22), ' ');
    std::cout << "  " << name << " " << kernels_text(op) << "\n";
  }
}

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

void print_json(const Report& r) {
  std::cout << "{\n  \"core_abi\": {\"major\": " << kiln::core_abi_major()
            << ", \"minor\": " << kiln::core_abi_minor() << "},\n"
            << "  \"plugin_search_path\": " << quoted_list(r.search_path) << ",\n"
            << "  \"plugins\": [";
  for (size_t i = 0; i < r.plugins.size(); ++i) {
    const kiln::PluginInfo& p = r.plugins[i];
    std::cout << (i ? ",\n" : "\n") << "    {\"file\": " << quoted(p.path)
              << ", \"name\": " << quoted(p.name) << ", \"version\": " << quoted(p.version)
              << ", \"summary\": " << quoted(p.summary) << ", \"abi\": {\"major\": " << p.abi_major
              << ", \"minor\": " << p.abi_minor
              << "}, \"state\": " << quoted(kiln::plugin_state_name(p.state))
              << ", \"reason\": " << quoted(p.reason) << ", \"devices\": " << quoted_list(p.devices)
              << "}";
  }
  std::cout << "\n  ],\n  \"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) {
    std::cout << (i ? ",\n" : "\n") << "    {\"device\": " << quoted(r.devices[i].first)
              << ", \"description\": " << quoted(r.devices[i].second) << "}";
  }
  std::cout << "\n  ],\n  \"comm_backends\": [";
  for (size_t i = 0; i < r.comm_backends.size(); ++i) {
    const kiln::distributed::CommBackendInfo& b = r.comm_backends[i];
    std::cout << (i ? ",\n" : "\n") << "    {\"name\": " << quoted(b.name)
              << ", \"plugin\": " << quoted(b.plugin)
              << ", \"available\": " << (b.available ? "true" : "false")
              << ", \"reason\": " << quoted(b.reason) << "}";
  }
  std::cout << "\n  ],\n  \"operators\": [";
  for (size_t i = 0; i < r.operators.size(); ++i) {
    const OperatorRow& op = r.operators[i];
    std::cout << (i ? ",\n" : "\n") << "    {\"name\": " << quoted(op.name)
              << ", \"composite\": " << (op.composite ? "true" : "false")
              << ", \"kernels\": " << quoted_list(op.kernel_types) << "}";
  }
  std::cout << "\n  ]\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      options.json = true;
    } else if (arg == "--plugin" && i + 1 < argc) {
      options.plugin_files.push_back(argv[++i]);
    } else if (arg == "--update-primitives-doc" && i + 1 < argc) {
      options.primitives_doc = argv[++i];
    } else if (arg.rfind("--plugin=", 0) == 0) {
      options.plugin_files.push_back(arg.substr(9));
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "kiln-info: unknown or incomplete argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  try {
    if (!options.primitives_doc.empty()) return update_primitives_doc(options.primitives_doc);
    Report report = gather(options);
    if (options.json) {
      print_json(report);
    } else {
      print_text(report);
    }
  } catch (const std::exception& e) {
    std::cerr << "kiln-info: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
