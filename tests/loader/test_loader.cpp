// The plugin loader against the test plugins of tests/plugins (each file there says what it
// does): the state and reason load_plugin reports for each, that the process survives each, and
// that a refused plugin leaves nothing registered behind.
//
// Note [One plugin search per process]: load_plugins() searches the plugin path once per process,
// so the search path is set by a global fixture before any test runs: KILN_PLUGIN_PATH names a
// missing folder and an empty one, and add_plugin_path names the null plugin's file. Tests that
// need other plugins load them with load_plugin, which returns the first result again for a file
// loaded before, so each test loads what it depends on whatever ran before it.
#define BOOST_TEST_MODULE loader
#include <boost/test/unit_test.hpp>

#include <kiln/data/pin_memory.h>
#include <kiln/kiln.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string plugin_file(const std::string& name) {
  return (fs::path(KILN_TEST_PLUGIN_DIR) / (name + ".so")).string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Checks that `text` contains each of `parts`, printing the text when one is missing.
void check_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    BOOST_TEST(contains(text, part), "expected '" << part << "' in: " << text);
  }
}

std::string state(const kiln::PluginInfo& p) { return kiln::plugin_state_name(p.state); }

bool cpu_available() { return kiln::is_available(kiln::kCPU); }

// A device type that no plugin provides must not allocate; the error names the type.
void check_no_device(const std::string& type) {
  BOOST_TEST(!kiln::is_available(kiln::Device(type).type()));
  try {
    kiln::empty({2}, kiln::Device(type));
    BOOST_ERROR("a tensor on '" << type << "' was created");
  } catch (const kiln::Error& e) {
    check_contains(e.what(), {"device type '" + type + "'", "not provided by any loaded plugin"});
  }
  BOOST_CHECK_THROW(kiln::device_description(kiln::Device(type)), kiln::Error);
}

bool has_kernel(const char* op, const std::string& type) {
  return kiln::find_operator(op)->has_plugin_kernel(kiln::Device(type).type());
}

struct SearchPathFixture {
  SearchPathFixture() {
    fs::create_directories(empty_dir());
    std::string path = "/nonexistent/kiln/plugins:" + empty_dir().string();
    setenv("KILN_PLUGIN_PATH", path.c_str(), 1);
    unsetenv("KILN_DEVICE");
    kiln::add_plugin_path(plugin_file("null"));
  }
  ~SearchPathFixture() {
    std::error_code ec;
    fs::remove_all(empty_dir(), ec);
  }
  static fs::path empty_dir() {
    return fs::temp_directory_path() / ("kiln_test_loader_" + std::to_string(getpid()));
  }
};
BOOST_TEST_GLOBAL_FIXTURE(SearchPathFixture);

}  // namespace

// See Note [One plugin search per process].
BOOST_AUTO_TEST_CASE(missing_and_empty_folders_are_harmless) {
  std::vector<std::string> path = kiln::plugin_search_path();
  BOOST_REQUIRE_EQUAL(path.size(), 4u);
  BOOST_TEST(path[0] == plugin_file("null"));
  BOOST_TEST(path[1] == "/nonexistent/kiln/plugins");
  BOOST_TEST(path[2] == SearchPathFixture::empty_dir().string());
  BOOST_TEST(fs::path(path[3]).filename() == "plugins");  // <dir of libkiln_core>/kiln/plugins
  BOOST_CHECK_NO_THROW(kiln::load_plugins());
  BOOST_CHECK_NO_THROW(kiln::devices());
  for (const kiln::PluginInfo& p : kiln::plugins()) {
    BOOST_TEST(!contains(p.path, SearchPathFixture::empty_dir().string()));
    BOOST_TEST(!contains(p.path, "/nonexistent/"));
  }
  // the null plugin came from its file on the search path
  BOOST_TEST(kiln::is_available(kiln::Device("null").type()));
  if (cpu_available()) {
    BOOST_TEST(kiln::device_description(kiln::Device(kiln::kCPU)) != "");
  } else {
    BOOST_TEST_MESSAGE("the CPU plugin is not built: no CPU device to check");
  }
}

BOOST_AUTO_TEST_CASE(null_device_allocates_and_copies_but_has_no_kernels) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("null"));
  BOOST_TEST(state(info) == "loaded");
  BOOST_TEST(info.reason == "");
  BOOST_TEST(info.devices == std::vector<std::string>{"null"});
  kiln::Device null("null");
  kiln::Tensor x = kiln::empty({2}, null);
  BOOST_TEST(x.device() == null);
  BOOST_TEST(x.numel() == 2);
  BOOST_TEST(kiln::device_description(null) == "null:0 (host memory, test device)");
  kiln::Tensor m = kiln::empty({2, 2}, null);
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"neg", [&] { kiln::neg(x); }},      {"add", [&] { kiln::add(x, x); }},
      {"sum", [&] { kiln::sum(x); }},      {"mm", [&] { kiln::mm(m, m); }},
      {"copy_", [&] { x.clone(); }},       {"fill_", [&] { kiln::zeros({2}, null); }},
  };
  for (const auto& [op, call] : calls) {
    BOOST_TEST_CONTEXT("operator " << op) {
      try {
        call();
        BOOST_ERROR("no error");
      } catch (const kiln::NotImplementedError& e) {
        std::string message = e.what();
        BOOST_TEST(message.rfind(op + ": no kernel for device 'null'", 0) == 0, message);
        check_contains(message, {"the operator has kernels for: ", "null.so",
                                 "did not opt in to CPU fallback"});
        if (cpu_available()) check_contains(message, {"kernels for: cpu"});
      } catch (const std::exception& e) {
        BOOST_ERROR("not a NotImplementedError: " << e.what());
      }
    }
  }
  if (!cpu_available()) {
    BOOST_TEST_MESSAGE("the CPU plugin is not built: skipped the copies between cpu and null");
    return;
  }
  // copies between devices need only the device's copy operation, no kernel
  kiln::Tensor a = kiln::tensor({1.5, -2.0, 3.25});
  kiln::Tensor on_null = a.to(null);
  BOOST_TEST(on_null.device() == null);
  BOOST_TEST(kiln::equal(on_null.to(kiln::Device(kiln::kCPU)), a));
}

BOOST_AUTO_TEST_CASE(good_plugin_runs_its_kernel_and_falls_back_to_cpu) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("good"));
  BOOST_TEST(state(info) == "loaded");
  BOOST_TEST(info.reason == "");
  BOOST_TEST(info.name == "good");
  BOOST_TEST(info.version == "1.2.3");
  BOOST_TEST(info.abi_major == kiln::core_abi_major());
  BOOST_TEST(info.abi_minor == kiln::core_abi_minor());
  BOOST_TEST(info.devices == std::vector<std::string>{"testdev"});
  kiln::Device dev("testdev");
  BOOST_TEST(kiln::is_available(dev.type()));
  BOOST_TEST(has_kernel("neg", "testdev"));
  BOOST_TEST(!has_kernel("add", "testdev"));

  float data[3] = {1.f, -2.f, 3.5f};
  kiln::Tensor x = kiln::from_blob(data, {3}, kiln::TensorOptions().device(dev));
  kiln::Tensor y = kiln::neg(x);
  BOOST_TEST(y.device() == dev);
  const float* out = y.data_ptr<float>();  // testdev memory is host memory
  BOOST_TEST(out[0] == -1.f);
  BOOST_TEST(out[1] == 2.f);
  BOOST_TEST(out[2] == -3.5f);

  // a second load of the same file returns the first result and loads nothing again
  BOOST_TEST(kiln::load_plugin(plugin_file("good")).devices == info.devices);
  int copies = 0;
  for (const kiln::PluginInfo& p : kiln::plugins()) copies += p.path == info.path;
  BOOST_TEST(copies == 1);

  if (!cpu_available()) {
    BOOST_TEST_MESSAGE("the CPU plugin is not built: skipped CPU fallback on testdev");
    return;
  }
  kiln::Tensor a = kiln::tensor({1.5, 2.5, -4.0});
  kiln::Tensor b = kiln::tensor({0.25, -1.0, 8.0});
  kiln::Tensor sum = kiln::add(a.to(dev), b.to(dev));  // no add kernel here: runs on the CPU
  BOOST_TEST(sum.device() == dev);
  BOOST_TEST(kiln::equal(sum.to(kiln::Device(kiln::kCPU)), kiln::add(a, b)));
}

BOOST_AUTO_TEST_CASE(a_second_plugin_with_the_same_name_is_refused) {
  kiln::PluginInfo first = kiln::load_plugin(plugin_file("good"));
  fs::path dir = fs::temp_directory_path() / ("kiln_test_loader_copy_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(plugin_file("good"), dir / "good_copy.so", fs::copy_options::overwrite_existing);
  kiln::PluginInfo info = kiln::load_plugin((dir / "good_copy.so").string());
  fs::remove_all(dir);
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason, {"a plugin named 'good' is already loaded from " + first.path});
  BOOST_TEST(info.devices.empty());
}

BOOST_AUTO_TEST_CASE(abi_major_mismatch_is_refused) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("abi_major"));
  int major = kiln::core_abi_major(), minor = kiln::core_abi_minor();
  BOOST_TEST(state(info) == "refused");
  BOOST_TEST(info.abi_major == major + 1);
  check_contains(info.reason,
                 {"built for kiln plugin ABI " + std::to_string(major + 1) + "." +
                      std::to_string(minor),
                  "this core has ABI " + std::to_string(major) + "." + std::to_string(minor),
                  "major versions differ", "rebuild the plugin against this kiln's SDK"});
  BOOST_TEST(!contains(info.reason, "must not be called"));
}

BOOST_AUTO_TEST_CASE(abi_minor_newer_than_the_core_is_refused) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("abi_minor_newer"));
  int major = kiln::core_abi_major(), minor = kiln::core_abi_minor();
  BOOST_TEST(state(info) == "refused");
  BOOST_TEST(info.abi_minor == minor + 1);
  check_contains(info.reason,
                 {"built for kiln plugin ABI " + std::to_string(major) + "." +
                      std::to_string(minor + 1),
                  "newer than this core's ABI " + std::to_string(major) + "." +
                      std::to_string(minor),
                  "upgrade kiln, or rebuild the plugin against this kiln's SDK"});
}

BOOST_AUTO_TEST_CASE(abi_minor_older_than_the_core_loads) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("abi_minor_older"));
  BOOST_TEST(state(info) == "loaded", info.reason);
  BOOST_TEST(info.abi_major == kiln::core_abi_major());
  BOOST_TEST(info.abi_minor == kiln::core_abi_minor() - 1);
  kiln::Device older("older");
  BOOST_TEST(kiln::empty({2}, older).device() == older);
  // its kiln_device_ops end before host_alloc (ABI 1.1): the core must not call what lies beyond
  BOOST_TEST(!kiln::data::pinned_memory_available(older));
}

BOOST_AUTO_TEST_CASE(a_plugin_without_a_description_is_refused) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("bad_query"));
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason, {"kiln_plugin_query returned no valid kiln_plugin_info"});
}

BOOST_AUTO_TEST_CASE(init_failure_is_refused_and_rolled_back) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("init_fails"));
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason,
                 {"registration failed: init_fails: the device's firmware is missing"});
  BOOST_TEST(info.devices.empty());
  check_no_device("failing");
  BOOST_TEST(!has_kernel("neg", "failing"));
}

BOOST_AUTO_TEST_CASE(an_exception_from_init_is_refused_and_rolled_back) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("init_throws"));
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason, {"C++ exception", "init_throws: out of order"});
  BOOST_TEST(info.devices.empty());
  check_no_device("throwing");
}

BOOST_AUTO_TEST_CASE(probe_saying_no_leaves_the_plugin_listed_but_unused) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("probe_says_no"));
  BOOST_TEST(state(info) == "not available");
  BOOST_TEST(info.name == "probe_says_no");
  // the plugin's reason, which also says that registering during the probe was refused
  check_contains(info.reason, {"probe_says_no: no such accelerator on this machine",
                               "register_device during probe returned -1"});
  BOOST_TEST(info.devices.empty());
  check_no_device("probe_no");  // and init never ran
}

BOOST_AUTO_TEST_CASE(a_missing_library_fails_the_load_and_names_it) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("missing_dep"));
  BOOST_TEST(state(info) == "load failed");
  check_contains(info.reason,
                 {"cannot load: ", "libkiln_test_absent.so", "cannot open shared object file",
                  "a library the plugin needs is missing"});
  BOOST_TEST(info.name == "");
}

BOOST_AUTO_TEST_CASE(a_library_that_is_not_a_plugin_fails_the_load) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("not_a_plugin"));
  BOOST_TEST(state(info) == "load failed");
  check_contains(info.reason, {"not a kiln plugin", "kiln_plugin_query"});
}

BOOST_AUTO_TEST_CASE(a_file_that_is_not_a_library_fails_the_load) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("garbage"));
  BOOST_TEST(state(info) == "load failed");
  check_contains(info.reason, {"cannot load: ", "garbage.so"});
}

BOOST_AUTO_TEST_CASE(a_missing_file_fails_the_load) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("no_such_plugin"));
  BOOST_TEST(state(info) == "load failed");
  BOOST_TEST(info.reason == "cannot load: no such file");
}

BOOST_AUTO_TEST_CASE(a_device_type_registered_twice_is_refused_naming_both_files) {
  kiln::PluginInfo null = kiln::load_plugin(plugin_file("null"));
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("duplicate_device"));
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason, {"device type 'null' is already registered by " + null.path,
                               "refused from " + info.path});
  BOOST_TEST(info.devices.empty());
  BOOST_TEST(kiln::empty({2}, kiln::Device("null")).numel() == 2);  // the first one still works
}

BOOST_AUTO_TEST_CASE(a_kernel_registered_twice_is_refused_and_rolled_back) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("duplicate_kernel"));
  BOOST_TEST(state(info) == "refused");
  check_contains(info.reason, {"operator 'neg' already has a kernel for device 'dupkern' from " +
                                   info.path + "; refused from " + info.path});
  check_no_device("dupkern");
  BOOST_TEST(!has_kernel("neg", "dupkern"));
}

BOOST_AUTO_TEST_CASE(bad_calls_to_the_host_table_are_refused_without_effect) {
  kiln::PluginInfo info = kiln::load_plugin(plugin_file("bad_calls"));
  BOOST_TEST(state(info) == "loaded", info.reason);
  BOOST_TEST(info.devices == std::vector<std::string>{"bad_calls"});
  BOOST_TEST(!has_kernel("neg", "bad_calls"));
  if (cpu_available()) BOOST_TEST(has_kernel("neg", "cpu"));  // kept the CPU plugin's kernel
}

BOOST_AUTO_TEST_CASE(every_file_is_listed_once_with_its_state) {
  std::vector<std::string> names = {"null", "good", "abi_major", "abi_minor_newer",
                                    "abi_minor_older", "bad_query", "init_fails", "init_throws",
                                    "probe_says_no", "missing_dep", "not_a_plugin", "garbage",
                                    "duplicate_device", "duplicate_kernel", "bad_calls"};
  for (const std::string& name : names) kiln::load_plugin(plugin_file(name));
  std::vector<kiln::PluginInfo> all = kiln::plugins();
  for (const std::string& name : names) {
    int seen = 0;
    for (const kiln::PluginInfo& p : all) seen += fs::path(p.path).filename() == name + ".so";
    BOOST_TEST(seen == 1, name << ".so listed " << seen << " times");
  }
  for (const kiln::PluginInfo& p : all) {
    BOOST_TEST((p.state == kiln::PluginState::Loaded) == p.reason.empty(), p.path);
  }
}
