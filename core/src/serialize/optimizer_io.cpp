// kiln::save(optimizer, path) and kiln::load(optimizer, path): an optimizer's state_dict() as
// a safetensors file. Tensors are "state.<param index>.<name>"; the metadata holds
//   "kiln.optimizer"            the optimizer's name ("Adam")
//   "param_groups"              the number of groups
//   "param_groups.<g>.params"   the group's parameter indices, "0,1,2"
//   "param_groups.<g>.<option>" each option, as the shortest decimal that reads back exactly
#include <kiln/optim/optimizer.h>
#include <kiln/serialize.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kiln {
namespace {

constexpr const char* kOptimizerKey = "kiln.optimizer";

std::string number_text(double v) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  throw Error(detail::str("load: '", path, "' is not a valid optimizer state file: ", problem));
}

const std::string& meta(const SafetensorsMetadata& m, const std::string& key,
                        const std::string& path) {
  auto it = m.find(key);
  if (it == m.end()) invalid(path, detail::str("its metadata lacks \"", key, "\""));
  return it->second;
}

int64_t parse_int(const std::string& text, const std::string& what, const std::string& path) {
  int64_t v = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), v);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size() || v < 0) {
    invalid(path, detail::str(what, " is '", text, "', not a non-negative integer"));
  }
  return v;
}

double parse_double(const std::string& text, const std::string& what, const std::string& path) {
  double v = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), v);
  // NaN is never an option's value (an infinite one may be, and is written as "inf")
  if (result.ec != std::errc() || result.ptr != text.data() + text.size() || std::isnan(v)) {
    invalid(path, detail::str(what, " is '", text, "', not a number"));
  }
  return v;
}

optim::OptimizerStateDict::Group read_group(const SafetensorsMetadata& m, int64_t g,
                                            const std::string& path) {
  optim::OptimizerStateDict::Group group;
  const std::string prefix = detail::str("param_groups.", g, ".");
  const std::string& params = meta(m, prefix + "params", path);
  size_t start = 0;
  while (start <= params.size() && !params.empty()) {
    size_t comma = params.find(',', start);
    if (comma == std::string::npos) comma = params.size();
    group.params.push_back(parse_int(params.substr(start, comma - start), prefix + "params", path));
    start = comma + 1;
  }
  for (const auto& [key, value] : m) {
    if (key.compare(0, prefix.size(), prefix) != 0 || key == prefix + "params") continue;
    group.options[key.substr(prefix.size())] = parse_double(value, key, path);
  }
  return group;
}

}  // namespace

void save(const optim::Optimizer& optimizer, const std::string& path) {
  optim::OptimizerStateDict dict = optimizer.state_dict();
  NamedTensors tensors;
  for (const auto& [index, state] : dict.state) {
    for (const auto& [name, t] : state) {
      tensors.emplace_back(detail::str("state.", index, ".", name), t);
    }
  }
  SafetensorsMetadata m;
  m[kOptimizerKey] = optimizer.name();
  m["param_groups"] = std::to_string(dict.param_groups.size());
  for (size_t g = 0; g < dict.param_groups.size(); ++g) {
    const std::string prefix = detail::str("param_groups.", g, ".");
    std::string params;
    for (int64_t i : dict.param_groups[g].params) {
      params += (params.empty() ? "" : ",") + std::to_string(i);
    }
    m[prefix + "params"] = params;
    for (const auto& [key, value] : dict.param_groups[g].options) {
      m[prefix + key] = number_text(value);
    }
  }
  save(tensors, path, m);
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  SafetensorsContents contents = load_safetensors(path);
  const SafetensorsMetadata& m = contents.metadata;
  if (!m.count(kOptimizerKey)) {
    invalid(path, detail::str("it holds no optimizer state (no \"", kOptimizerKey, "\" metadata)"));
  }
  const std::string& kind = m.at(kOptimizerKey);
  KILN_CHECK_VALUE(kind == optimizer.name(), "load: '", path, "' holds the state of an ", kind,
                   " optimizer, not of ", optimizer.name());
  optim::OptimizerStateDict dict;
  int64_t groups = parse_int(meta(m, "param_groups", path), "param_groups", path);
  for (int64_t g = 0; g < groups; ++g) dict.param_groups.push_back(read_group(m, g, path));
  for (const auto& [name, t] : contents.tensors) {
    size_t dot = name.find('.', 6);
    if (name.compare(0, 6, "state.") != 0 || dot == std::string::npos) {
      invalid(path, detail::str("tensor '", name, "' is not named state.<index>.<name>"));
    }
    int64_t index = parse_int(name.substr(6, dot - 6), "the index of tensor '" + name + "'", path);
    dict.state[index][name.substr(dot + 1)] = t;
  }
  optimizer.load_state_dict(dict);
}

}  // namespace kiln
