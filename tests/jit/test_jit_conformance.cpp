// Every conformance case (tools/conformance: reference cases for each of their dtypes, golden
// cases for each of their records), traced and replayed on the CPU, equals the eager call:
// same sizes, dtypes and values, bit for bit (NaN where eager has NaN). Random cases draw
// numbers of the same distribution, shapes and dtypes checked only: their functions call
// manual_seed, which is not an operator, so a replay continues the generator's stream (as
// torch.jit.trace). One Boost.Test case per conformance case, named as it.
#include "conformance.h"
#include "golden.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>

#include <set>
#include <string>

namespace {

using conformance::Args;
using conformance::Case;
using conformance::Outputs;
using kiln::Tensor;

struct Quiet : kiln::WarningHandler {
  void process(const kiln::Warning&) override {}
};

Args fresh(const Args& a) {
  Args out = a;
  for (Tensor& t : out.tensors) {
    if (t.defined()) t = t.clone();
  }
  return out;
}

bool same(const Tensor& a, const Tensor& b, bool values, std::string& why) {
  if (a.defined() != b.defined()) {
    why = "one output is undefined";
    return false;
  }
  if (!a.defined()) return true;
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    why = kiln::detail::str("eager ", kiln::dtype_name(a.dtype()), a.sizes(), ", replay ",
                            kiln::dtype_name(b.dtype()), b.sizes());
    return false;
  }
  if (a.numel() == 0 || !values) return true;
  Tensor x = a.cpu(), y = b.cpu();
  Tensor equal = kiln::eq(x, y);
  if (kiln::is_floating_point(a.dtype())) equal = equal | (kiln::isnan(x) & kiln::isnan(y));
  if (!equal.all().item<bool>()) {
    why = "values differ";
    return false;
  }
  return true;
}

// `save`: also saved, loaded and replayed (once per case: a save flushes the file to disk).
void check_case(const Case& c, const Args& inputs, const std::string& label, bool save) {
  // eager, on a copy (in-place cases write their inputs)
  Outputs eager;
  try {
    kiln::manual_seed(5);
    eager = c.run(fresh(inputs));
  } catch (const kiln::Error&) {
    return;  // an error case: tracing it raises the same error (checked below)
  }
  Args base = inputs;
  auto fn = [&c, &base](const std::vector<Tensor>& ts) -> std::vector<Tensor> {
    Args a = base;
    for (size_t i = 0, k = 0; i < a.tensors.size(); ++i) {
      if (a.tensors[i].defined()) a.tensors[i] = ts[k++];
    }
    Outputs out = c.run(a);
    std::vector<Tensor> defined;
    for (const Tensor& t : out) defined.push_back(t.defined() ? t : kiln::empty({0}));
    return defined;
  };
  auto tensors_of = [](const Args& a) {
    std::vector<Tensor> ts;
    for (const Tensor& t : a.tensors) {
      if (t.defined()) ts.push_back(t);
    }
    return ts;
  };
  Quiet quiet;
  kiln::WarningUtils::WarningHandlerGuard guard(&quiet);
  kiln::jit::TracedFunction traced;
  try {
    traced = kiln::jit::trace(fn, tensors_of(fresh(inputs)));
  } catch (const std::exception& e) {
    BOOST_ERROR(c.name << " [" << label << "]: the trace threw: " << e.what());
    return;
  }
  std::vector<Tensor> replayed;
  try {
    kiln::manual_seed(5);
    replayed = traced(tensors_of(fresh(inputs)));
  } catch (const std::exception& e) {
    BOOST_ERROR(c.name << " [" << label << "]: the replay threw: " << e.what() << "\n"
                       << traced.graph().str());
    return;
  }
  BOOST_REQUIRE_EQUAL(replayed.size(), eager.size());
  bool random = false;
  for (const kiln::jit::Node& n : traced.graph().nodes) {
    std::string name = n.call->op().name();
    for (const char* word : {"uniform", "normal", "random", "bernoulli"}) {
      random = random || name.find(word) != std::string::npos;
    }
  }
  auto check_outputs = [&](const std::vector<Tensor>& got, const char* which) {
    for (size_t i = 0; i < eager.size(); ++i) {
      std::string why;
      Tensor e = eager[i].defined() ? eager[i] : kiln::empty({0});
      BOOST_CHECK_MESSAGE(same(e, got[i], !random, why), c.name << " [" << label << "] " << which
                                                                << " output " << i << ": " << why
                                                                << "\n"
                                                                << traced.graph().str());
    }
  };
  check_outputs(replayed, "replay");
  // saved and loaded (kiln::jit::save / load): the same graph, the same results
  if (save && !random) {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("kiln_jit_conformance_" + std::to_string(::getpid()) + ".kiln"))
                           .string();
    try {
      kiln::jit::save(traced, path);
      kiln::jit::TracedFunction loaded = kiln::jit::load(path);
      BOOST_CHECK_EQUAL(loaded.graph().str(), traced.graph().str());
      check_outputs(loaded(tensors_of(fresh(inputs))), "loaded replay");
    } catch (const std::exception& e) {
      BOOST_ERROR(c.name << " [" << label << "]: save or load threw: " << e.what() << "\n"
                         << traced.graph().str());
    }
    std::filesystem::remove(path);
  }
  // Without grad: the first call plans (Note [Replay plan], core/src/jit/plan.cpp), the second
  // runs the plan's kernels into its buffers; the first call's results stay the caller's.
  kiln::autograd::NoGradGuard no_grad;
  std::vector<Tensor> planned, fast;
  try {
    kiln::manual_seed(5);
    planned = traced(tensors_of(fresh(inputs)));
    kiln::manual_seed(5);
    fast = traced(tensors_of(fresh(inputs)));
  } catch (const std::exception& e) {
    BOOST_ERROR(c.name << " [" << label << "]: the planned replay threw: " << e.what() << "\n"
                       << traced.graph().str());
    return;
  }
  BOOST_REQUIRE_EQUAL(fast.size(), eager.size());
  check_outputs(fast, "planned replay");
  check_outputs(planned, "planning replay (after the next call)");
}

void run_case(const Case& c) {
  bool save = true;
  if (c.golden) {
    for (const conformance::GoldenRecord& r : conformance::golden_records()) {
      if (r.name != c.name) continue;
      check_case(c, r.args, r.label, save);
      save = false;
    }
    return;
  }
  for (kiln::ScalarType dtype : c.dtypes) {
    check_case(c, c.inputs(dtype), kiln::dtype_name(dtype), save);
    save = false;
  }
}

bool init_suite() {
  namespace utf = boost::unit_test;
  utf::framework::master_test_suite().p_name.value = "jit_conformance";
  std::set<std::string> names;
  for (const Case& c : conformance::all_cases()) {
    std::string name = (c.golden ? "pytorch_" : "reference_") + c.name;
    if (!names.insert(name).second) continue;
    const Case* p = &c;
    utf::framework::master_test_suite().add(utf::make_test_case([p] { run_case(*p); }, name, c.file,
                                                                c.line));
  }
  return true;
}

}  // namespace

int main(int argc, char* argv[]) {
  return boost::unit_test::unit_test_main(&init_suite, argc, argv);
}
