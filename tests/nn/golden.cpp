#include "golden.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nn_test {
namespace {

std::vector<int64_t> parse_sizes(const std::string& text) {  // "[2,3]"
  std::vector<int64_t> sizes;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream in(inner);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::stoll(item));
  return sizes;
}

// Adds the cases of tests/golden/<file_name> to `cases`.
void load_file(const std::string& file_name, std::map<std::string, GoldenCase>& cases) {
  std::string path = std::string(KILN_GOLDEN_DIR) + "/" + file_name;
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string kind, name;
    in >> kind >> name;
    GoldenCase& c = cases[name];
    if (kind == "t") {
      std::string field, dtype, sizes;
      in >> field >> dtype >> sizes;
      GoldenTensor t;
      t.is_int = dtype == "int64";
      t.sizes = parse_sizes(sizes);
      std::string v;
      while (in >> v) t.values.push_back(std::stod(v));
      c.tensors[field] = t;
    } else if (kind == "s") {
      std::string field, rest;
      in >> field;
      std::getline(in, rest);
      c.strings[field] = rest.empty() ? rest : rest.substr(1);
    } else {
      throw std::runtime_error(file_name + ": bad line: " + line);
    }
  }
}

// nn_cases.txt (make_nn_golden.py), loss_cases.txt (make_loss_golden.py), layers_cases.txt
// (make_layers_golden.py) and rnn_cases.txt (make_rnn_golden.py).
std::map<std::string, GoldenCase> load() {
  std::map<std::string, GoldenCase> cases;
  load_file("nn_cases.txt", cases);
  load_file("loss_cases.txt", cases);
  load_file("layers_cases.txt", cases);
  load_file("rnn_cases.txt", cases);
  load_file("attention_cases.txt", cases);
  load_file("func_cases.txt", cases);
  load_file("alsm_cases.txt", cases);
  return cases;
}

}  // namespace

const std::map<std::string, GoldenCase>& golden_cases() {
  static const std::map<std::string, GoldenCase> cases = load();
  return cases;
}

const GoldenCase& golden_case(const std::string& name) {
  auto it = golden_cases().find(name);
  if (it == golden_cases().end()) throw std::runtime_error("no golden case " + name);
  return it->second;
}

kiln::Tensor golden(const std::string& name, const std::string& field,
                    std::optional<kiln::ScalarType> dtype, bool requires_grad) {
  const GoldenCase& c = golden_case(name);
  auto it = c.tensors.find(field);
  if (it == c.tensors.end()) throw std::runtime_error("no field " + field + " in " + name);
  const GoldenTensor& g = it->second;
  std::vector<double> v = g.values;
  kiln::Tensor t = kiln::from_blob(v.data(), g.sizes, kiln::kDouble).clone();
  kiln::ScalarType want = dtype.value_or(g.is_int ? kiln::kLong : kiln::kDouble);
  if (want != kiln::kDouble) t = t.to(want);
  if (requires_grad) t.requires_grad_();
  return t;
}

std::vector<double> values(const kiln::Tensor& t) {
  kiln::Tensor h = t.detach().to(kiln::kDouble, /*copy=*/true).contiguous();
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

void check_close(const kiln::Tensor& got, const kiln::Tensor& want, double rtol, double atol,
                 const std::string& what) {
  BOOST_REQUIRE_MESSAGE(got.defined(), what << ": undefined result");
  BOOST_REQUIRE_MESSAGE(got.sizes().equals(want.sizes()),
                        what << ": sizes " << got.sizes() << " != " << want.sizes());
  std::vector<double> a = values(got), b = values(want);
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    bool same = (std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i] ||
                std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]);
    if (!same && bad++ < 3) {
      BOOST_ERROR(what << ": element " << i << " is " << a[i] << ", expected " << b[i]);
    }
  }
  if (bad > 3) BOOST_ERROR(what << ": " << bad << " elements differ in all");
}

void check_case(const std::string& name, const std::vector<std::string>& inputs,
                const std::function<kiln::Tensor(std::vector<kiln::Tensor>&)>& f, double tol) {
  std::vector<kiln::Tensor> xs;
  for (const std::string& field : inputs) {
    bool is_int = golden_case(name).tensors.at(field).is_int;
    xs.push_back(golden(name, field, std::nullopt, /*requires_grad=*/!is_int));
  }
  kiln::Tensor out = f(xs);
  check_close(out, golden(name, "out"), tol, tol, name + " out");
  const auto& fields = golden_case(name).tensors;
  if (fields.count("gy")) {
    kiln::sum(out * golden(name, "gy")).backward();
  } else if (fields.count("grad_" + inputs[0])) {
    out.backward();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!fields.count("grad_" + inputs[i])) continue;
    check_close(xs[i].grad(), golden(name, "grad_" + inputs[i]), tol, tol,
                name + " grad_" + inputs[i]);
  }
}

}  // namespace nn_test
