// The profiler: events of operator calls (name, shapes, dtypes, device, time, bytes), nesting of
// composites and record_function ranges, self time, key_averages and its table, the Chrome trace
// (parsed back with python3's json), several threads, and off means nothing recorded.
#define BOOST_TEST_MODULE profiler
#include "../check_error.h"

#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using kiln::Tensor;
namespace profiler = kiln::profiler;

namespace {

std::vector<const profiler::Event*> named(const std::vector<profiler::Event>& events,
                                          const std::string& name) {
  std::vector<const profiler::Event*> out;
  for (const auto& e : events) {
    if (e.name == name) out.push_back(&e);
  }
  return out;
}

std::string names(const std::vector<profiler::Event>& events) {
  std::string out;
  for (const auto& e : events) out += e.name + "@" + std::to_string(e.depth) + " ";
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(records_operator_calls_with_shapes_dtypes_device_and_bytes) {
  Tensor a = kiln::rand({2, 3}), b = kiln::rand({3, 4});
  profiler::Profile prof;
  Tensor c = kiln::mm(a, b);
  Tensor d = kiln::exp(c.to(kiln::kDouble));
  prof.stop();
  const auto& events = prof.events();
  auto mm = named(events, "mm");
  BOOST_REQUIRE_MESSAGE(mm.size() == 1, names(events));
  BOOST_CHECK(!mm[0]->user_range);
  BOOST_REQUIRE_EQUAL(mm[0]->input_shapes.size(), 2u);
  BOOST_CHECK((mm[0]->input_shapes[0] == std::vector<int64_t>{2, 3}));
  BOOST_CHECK((mm[0]->input_shapes[1] == std::vector<int64_t>{3, 4}));
  BOOST_CHECK_EQUAL(mm[0]->input_dtypes[0], "float32");
  BOOST_CHECK_EQUAL(mm[0]->device, "cpu");
  BOOST_CHECK_GE(mm[0]->bytes, 2 * 4 * 4);  // the [2, 4] float32 result
  BOOST_CHECK_GE(mm[0]->duration_ns, mm[0]->self_ns);
  BOOST_CHECK_GE(mm[0]->self_ns, 0);
  auto exp = named(events, "exp");
  BOOST_REQUIRE_EQUAL(exp.size(), 1u);
  BOOST_CHECK_EQUAL(exp[0]->input_dtypes[0], "float64");
  BOOST_CHECK_GE(exp[0]->start_ns, mm[0]->start_ns + mm[0]->duration_ns);
  // stopped: nothing more is recorded
  Tensor e = kiln::mm(a, b);
  BOOST_CHECK_EQUAL(named(prof.events(), "mm").size(), 1u);
  BOOST_CHECK(!profiler::is_profiling());
}

BOOST_AUTO_TEST_CASE(a_composite_has_its_operators_as_children_and_self_time_excludes_them) {
  Tensor x = kiln::rand({8, 5}), w = kiln::rand({3, 5}), bias = kiln::rand({3});
  profiler::Profile prof;
  Tensor y = kiln::nn::functional::linear(x, w, bias);
  const auto& events = prof.events();
  BOOST_REQUIRE(!events.empty());
  const profiler::Event& top = events.front();
  BOOST_CHECK_EQUAL(top.depth, 0);
  int64_t children = 0;
  int count = 0;
  for (const auto& e : events) {
    if (e.depth == 1 && e.start_ns >= top.start_ns &&
        e.start_ns + e.duration_ns <= top.start_ns + top.duration_ns) {
      children += e.duration_ns;
      ++count;
    }
  }
  BOOST_CHECK_MESSAGE(count >= 1, "linear has no children: " << names(events));
  BOOST_CHECK_EQUAL(top.self_ns, top.duration_ns - children);
}

BOOST_AUTO_TEST_CASE(record_function_ranges_nest_around_operators) {
  Tensor x = kiln::rand({4});
  profiler::Profile prof;
  {
    profiler::record_function outer("outer");
    Tensor y = x + 1;
    {
      profiler::record_function inner("inner");
      Tensor z = kiln::relu(x);
    }
  }
  const auto& events = prof.events();
  auto outer = named(events, "outer"), inner = named(events, "inner");
  BOOST_REQUIRE_EQUAL(outer.size(), 1u);
  BOOST_REQUIRE_EQUAL(inner.size(), 1u);
  BOOST_CHECK(outer[0]->user_range);
  BOOST_CHECK_EQUAL(outer[0]->depth, 0);
  BOOST_CHECK_EQUAL(inner[0]->depth, 1);
  auto relu = named(events, "relu");
  BOOST_REQUIRE_EQUAL(relu.size(), 1u);
  BOOST_CHECK_EQUAL(relu[0]->depth, 2);
  BOOST_CHECK_GE(outer[0]->duration_ns, inner[0]->duration_ns);
  BOOST_CHECK_LE(outer[0]->self_ns, outer[0]->duration_ns - inner[0]->duration_ns);
  // a range without a profile records nothing and costs nothing
  profiler::record_function idle("idle");
}

BOOST_AUTO_TEST_CASE(key_averages_counts_sorts_and_groups_by_input_shape) {
  Tensor a = kiln::rand({2, 2}), b = kiln::rand({3, 3});
  profiler::Profile prof;
  for (int i = 0; i < 3; ++i) Tensor c = kiln::exp(a);
  for (int i = 0; i < 2; ++i) Tensor c = kiln::exp(b);
  Tensor d = kiln::sin(a);
  auto averages = prof.key_averages();
  int64_t exp_calls = 0, sin_calls = 0;
  for (const auto& r : averages.rows()) {
    if (r.key == "exp") exp_calls = r.count;
    if (r.key == "sin") sin_calls = r.count;
    BOOST_CHECK_GE(r.cpu_time_total_ns, r.self_cpu_time_total_ns);
  }
  BOOST_CHECK_EQUAL(exp_calls, 5);
  BOOST_CHECK_EQUAL(sin_calls, 1);
  std::string table = averages.table("count");
  for (const char* column :
       {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "CPU Mem",
        "Self CPU Mem", "# of Calls", "Self CPU time total:"}) {
    BOOST_CHECK_MESSAGE(table.find(column) != std::string::npos, column << " in\n" << table);
  }
  BOOST_CHECK_LT(table.find("exp"), table.find("sin"));  // sorted by count, descending
  std::string limited = averages.table("count", 1);
  BOOST_CHECK(limited.find("sin") == std::string::npos);
  CHECK_ERROR(kiln::ValueError, averages.table("flops"), "cannot sort by 'flops'",
              "self_cpu_time_total");

  auto by_shape = prof.key_averages(/*group_by_input_shape=*/true);
  int exp_rows = 0;
  for (const auto& r : by_shape.rows()) {
    if (r.key != "exp") continue;
    ++exp_rows;
    BOOST_CHECK(r.input_shapes == "[[2, 2]]" || r.input_shapes == "[[3, 3]]");
    BOOST_CHECK_EQUAL(r.count, r.input_shapes == "[[2, 2]]" ? 3 : 2);
  }
  BOOST_CHECK_EQUAL(exp_rows, 2);
  BOOST_CHECK(by_shape.table().find("Input Shapes") != std::string::npos);
  std::ostringstream printed;
  printed << by_shape;
  BOOST_CHECK(printed.str().find("[[3, 3]]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(operators_of_other_threads_are_recorded) {
  profiler::Profile prof;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      Tensor x = kiln::rand({16});
      for (int i = 0; i < 50; ++i) x = kiln::sin(x);
    });
  }
  for (auto& t : threads) t.join();
  auto sins = named(prof.events(), "sin");
  BOOST_CHECK_EQUAL(sins.size(), 200u);
  std::set<uint64_t> ids;
  for (const auto* e : sins) ids.insert(e->thread);
  BOOST_CHECK_EQUAL(ids.size(), 4u);
}

BOOST_AUTO_TEST_CASE(one_profile_at_a_time) {
  profiler::Profile prof;
  CHECK_ERROR(kiln::Error, profiler::Profile second, "already recording");
  prof.stop();
  profiler::Profile third;  // the first one stopped
  BOOST_CHECK(profiler::is_profiling());
}

BOOST_AUTO_TEST_CASE(chrome_trace_is_json_with_escaped_names) {
  Tensor x = kiln::rand({3, 2});
  std::string path = "/tmp/kiln_profiler_trace_" + std::to_string(::getpid()) + ".json";
  {
    profiler::Profile prof;
    {
      profiler::record_function range("a \"quoted\" \\ name\n\twith\x01 control");
      Tensor y = kiln::relu(x) * 2;
    }
    prof.export_chrome_trace(path);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  BOOST_CHECK(text.str().find("\"traceEvents\"") != std::string::npos);
  BOOST_CHECK(text.str().find("\"ph\": \"X\"") != std::string::npos);
  if (std::system("/usr/bin/python3 -c 'pass' > /dev/null 2>&1") != 0) {
    BOOST_TEST_MESSAGE("python3 not available: the JSON is not parsed back");
  } else {
    std::string check =
        "/usr/bin/python3 -c \"import json, sys; t = json.load(open(sys.argv[1])); "
        "names = [e['name'] for e in t['traceEvents']]; "
        "assert 'a \\\"quoted\\\" \\\\\\\\ name\\\\n\\\\twith\\\\x01 control' in names, names; "
        "assert 'relu' in names, names; "
        "assert all(e['ph'] == 'X' and e['dur'] >= 0 for e in t['traceEvents'])\" " +
        path;
    BOOST_CHECK_EQUAL(std::system(check.c_str()), 0);
  }
  std::remove(path.c_str());
  CHECK_ERROR(
      kiln::Error,
      [] {
        profiler::Profile p;
        p.export_chrome_trace("/nonexistent-dir/trace.json");
      }(),
      "export_chrome_trace", "/nonexistent-dir/trace.json");
}

BOOST_AUTO_TEST_CASE(traced_and_replayed_calls_are_profiled) {
  Tensor x = kiln::rand({4});
  kiln::jit::TraceOptions unfused;
  unfused.fuse = false;
  auto traced = kiln::jit::trace([](const Tensor& t) { return kiln::exp(t) + 1; }, x, unfused);
  {
    profiler::Profile prof;
    Tensor y = traced.forward(x);
    BOOST_CHECK_EQUAL(named(prof.events(), "exp").size(), 1u);
  }
  // fused, the chain is one fused_pointwise call
  auto fused = kiln::jit::trace([](const Tensor& t) { return kiln::exp(t) + 1; }, x);
  profiler::Profile prof;
  Tensor y = fused.forward(x);
  BOOST_CHECK_EQUAL(named(prof.events(), "fused_pointwise").size(), 1u);
}
