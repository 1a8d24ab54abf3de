// Runs every registered case on every loaded device and input layout, one Boost.Test case per
// registered case (suites "reference" and "pytorch"), the gradients of the cases marked
// `gradient`, plus the coverage checks against the operator registry (all_operators()): every
// operator has a case (or a reason in kNoCase), every operator with a backward has a gradient
// case, docs/primitives.md lists every primitive, and the golden file and the golden cases agree.
#include "check.h"
#include "golden.h"

#include <kiln/primitive_docs.h>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace conformance {
namespace {

using namespace kiln;

// Collects failures of one Boost.Test case and reports the first few in full.
struct Failures {
  int count = 0;
  void add(const std::string& where, const std::string& what) {
    if (++count <= 12) BOOST_ERROR(where << ": " << what);
  }
  FailureSink sink() {
    return [this](const std::string& where, const std::string& what) { add(where, what); };
  }
  ~Failures() {
    if (count > 12) BOOST_ERROR(count - 12 << " more failures of this case not shown");
  }
};

void reference_test(const Case& c) {
  Failures failures;
  int calls = run_reference_case(c, devices(), failures.sink());
  BOOST_TEST(calls > 0, c.name << " made no call");
  if (!c.gradient) return;
  for (const Device& device : devices()) {
    bool checked = run_gradient_case(c, device, failures.sink());
    BOOST_TEST(checked, c.name << " is marked `gradient`, but gives no gradient (float32 or "
                               << "float64 inputs) on " << device);
  }
}

void golden_test(const Case& c) {
  Failures failures;
  int records = run_golden_case(c, devices(), failures.sink());
  BOOST_TEST(records > 0, c.name << ": no record in " << golden_file());
}

bool init_suite() {
  namespace utf = boost::unit_test;
  utf::framework::master_test_suite().p_name.value = "conformance";
  utf::test_suite* reference = BOOST_TEST_SUITE("reference");
  utf::test_suite* pytorch = BOOST_TEST_SUITE("pytorch");
  std::set<std::string> names[2];
  for (const Case& c : all_cases()) {
    if (!names[c.golden].insert(c.name).second) {
      throw std::runtime_error("conformance: two cases are named " + c.name);
    }
    const Case* p = &c;
    auto body = c.golden ? std::function<void()>([p] { golden_test(*p); })
                         : std::function<void()>([p] { reference_test(*p); });
    (c.golden ? pytorch : reference)->add(utf::make_test_case(body, c.name, c.file, c.line));
  }
  utf::framework::master_test_suite().add(reference);
  utf::framework::master_test_suite().add(pytorch);
  return true;
}

}  // namespace
}  // namespace conformance

// --- coverage -----------------------------------------------------------------------------------
namespace {

std::set<std::string> covered_ops(bool gradient_only) {
  std::set<std::string> ops;
  for (const conformance::Case& c : conformance::all_cases()) {
    if (c.gradient || !gradient_only) ops.insert(c.op);
  }
  return ops;
}

// The operators of the registry that have no case of their own, each with the reason. An
// in-place variant (add_) needs none: it runs its functional operator's kernel, whose cases cover
// it (cases_inplace.cpp checks the writes).
const std::map<std::string, std::string> kNoCase = {
    {"view", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"reshape", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"expand", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"permute", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"transpose", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"select", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"narrow", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"slice", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"as_strided", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"unsqueeze", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"squeeze", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"squeeze.dim", "a view: no kernel; test_tensor and test_gradcheck check it"},
    {"fused_pointwise", "a pointwise program (kiln::jit::fuse_pointwise); test_fused_pointwise "
                        "compares it with the unfused operators, test_jit_conformance traces "
                        "every case with fusion"},
    {"linear", "a composite of mm and add (cases above); test_nn checks it against PyTorch"},
    {"lstm", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"lstm.data", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"gru", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"gru.data", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_tanh", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_tanh.data", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_relu", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_relu.data", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"lstm_cell", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"gru_cell", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_tanh_cell", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"rnn_relu_cell", "a recurrent composite; test_nn checks it against PyTorch (rnn_cases.txt)"},
    {"softplus", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"softmax", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"log_softmax", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"mse_loss", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"nll_loss", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"cross_entropy", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    {"binary_cross_entropy", "a composite of primitives with cases; test_nn checks it"},
    {"binary_cross_entropy_with_logits", "a composite of primitives with cases; test_nn checks it"},
    {"layer_norm", "a composite of primitives with cases; test_nn checks it against PyTorch"},
    // losses and distances: composites of primitives with cases; test_nn checks their values and
    // gradients against PyTorch and finite differences (test_libtorch_losses.cpp)
    {"l1_loss", "a composite; test_nn checks it"},
    {"smooth_l1_loss", "a composite; test_nn checks it"},
    {"huber_loss", "a composite; test_nn checks it"},
    {"kl_div", "a composite; test_nn checks it"},
    {"poisson_nll_loss", "a composite; test_nn checks it"},
    {"margin_ranking_loss", "a composite; test_nn checks it"},
    {"cosine_embedding_loss", "a composite; test_nn checks it"},
    {"hinge_embedding_loss", "a composite; test_nn checks it"},
    {"multi_margin_loss", "a composite; test_nn checks it"},
    {"multilabel_margin_loss", "a composite; test_nn checks it"},
    {"soft_margin_loss", "a composite; test_nn checks it"},
    {"triplet_margin_loss", "a composite; test_nn checks it"},
    {"ctc_loss", "a composite; test_nn checks it"},
    {"cosine_similarity", "a composite; test_nn checks it"},
    // issue 15's functional operators for libtorch's tests: composites of primitives with cases,
    // checked against PyTorch and finite differences by test_nn (tests/nn/test_func.cpp)
    {"bilinear", "a composite; test_nn checks it"},
    {"pdist", "a composite; test_nn checks it"},
    {"grid_sampler", "a composite; test_nn checks it"},
    {"fractional_max_pool2d", "a composite; test_nn checks it"},
    {"fractional_max_pool3d", "a composite; test_nn checks it"},
};

bool is_inplace_variant(const kiln::OperatorBase& op) { return op.functional() != &op; }

}  // namespace

BOOST_AUTO_TEST_SUITE(coverage)

// A new operator without a case fails here: "a new operator without a case is incomplete".
BOOST_AUTO_TEST_CASE(every_operator_has_a_case) {
  std::set<std::string> ops = covered_ops(false);
  int checked = 0;
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (is_inplace_variant(*op)) continue;
    ++checked;
    bool excluded = kNoCase.count(op->name()) != 0;
    BOOST_CHECK_MESSAGE(ops.count(op->name()) || excluded,
                        op->name() << " has no conformance case (tools/conformance/cases_*.cpp)");
    BOOST_CHECK_MESSAGE(!ops.count(op->name()) || !excluded,
                        op->name() << " has a case: take it out of kNoCase");
  }
  for (const auto& [name, reason] : kNoCase) {
    BOOST_CHECK_MESSAGE(kiln::find_operator(name) != nullptr,
                        "kNoCase lists " << name << ", which is not an operator");
  }
  BOOST_TEST_MESSAGE(checked << " operators");
}

// An operator with a backward (an Autograd kernel; in-place operators all have one) has a case
// marked `gradient`, whose gradients are compared on every device.
BOOST_AUTO_TEST_CASE(every_operator_with_a_backward_has_a_gradient_case) {
  std::set<std::string> ops = covered_ops(true);
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (op->is_inplace() || kNoCase.count(op->name())) continue;
    if (!op->has_layer(kiln::DispatchKey::Autograd)) continue;
    BOOST_CHECK_MESSAGE(ops.count(op->name()), op->name() << " has a backward, and no case "
                                                          << "marked `gradient`");
  }
}

// docs/primitives.md names every primitive operator, and every operator its tables list exists.
BOOST_AUTO_TEST_CASE(primitives_md_lists_every_primitive) {
  const std::string path = std::string(KILN_DOCS_DIR) + "/primitives.md";
  std::ifstream file(path);
  BOOST_REQUIRE_MESSAGE(file, "cannot open " << path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  for (const kiln::OperatorBase* op : kiln::all_operators()) {
    if (!op->is_primitive() || is_inplace_variant(*op)) continue;
    BOOST_CHECK_MESSAGE(doc.find("`" + std::string(op->name()) + "`") != std::string::npos,
                        op->name() << " is a primitive that " << path << " does not list");
  }
  // the first cell of each table row: `name` `name` ...
  std::istringstream lines(doc);
  std::string line;
  int listed = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
      size_t b = cell.find('`', a + 1);
      if (b == std::string::npos) break;
      std::string name = cell.substr(a + 1, b - a - 1);
      ++listed;
      BOOST_CHECK_MESSAGE(kiln::find_operator(name) != nullptr,
                          path << " lists " << name << ", which is not an operator");
      a = b;
    }
  }
  BOOST_TEST(listed > 0, path << " has no operator table");
}

// The committed table of unary operators is the registry's (See Note [Generated primitive rows]):
// the build target kiln_primitives_doc, a dependency of this test, rewrites it.
BOOST_AUTO_TEST_CASE(primitives_md_rows_are_generated) {
  const std::string path = std::string(KILN_DOCS_DIR) + "/primitives.md";
  std::ifstream file(path);
  BOOST_REQUIRE_MESSAGE(file, "cannot open " << path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  BOOST_CHECK_MESSAGE(kiln::with_generated_primitive_rows(doc) == doc,
                      path << "'s generated table differs from the operator registry: build the "
                           << "target kiln_primitives_doc (every build does), which rewrites it");
  BOOST_CHECK_THROW(kiln::with_generated_primitive_rows("| `exp` | x | out |\n"), kiln::ValueError);
}

BOOST_AUTO_TEST_CASE(golden_records_have_cases) {
  std::set<std::string> golden;
  for (const conformance::Case& c : conformance::all_cases()) {
    if (c.golden) golden.insert(c.name);
  }
  std::set<std::string> unknown;
  for (const conformance::GoldenRecord& r : conformance::golden_records()) {
    if (!golden.count(r.name)) unknown.insert(r.name);
  }
  for (const std::string& name : unknown) {
    BOOST_ERROR(name << " has records in the golden file but no registered golden case");
  }
  BOOST_TEST(!conformance::golden_records().empty());
  BOOST_TEST_MESSAGE(conformance::golden_records().size() << " golden records");
}

BOOST_AUTO_TEST_SUITE_END()

int main(int argc, char* argv[]) {
  return boost::unit_test::unit_test_main(&conformance::init_suite, argc, argv);
}
