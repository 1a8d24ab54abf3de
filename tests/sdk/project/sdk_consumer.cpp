// Uses the SDK's example plugins, built out of tree and installed into kiln's plugin folder, the
// way a user's program would: the "ref" device and the "csv" data source.
//
//   sdk-consumer --default=cpu:0 WORK_DIR
//
// Checks, each printed as "ok: ..." (the first failure exits 1 with what went wrong):
//   - ref:0 is listed, Device("ref:0") allocates, default_device() is the one given (KILN_DEVICE
//     picks it when set);
//   - tensors move between cpu and ref both ways, values intact;
//   - add and sub with an alpha read it by its kind on cpu and ref: integer tensors with an
//     integral alpha, float tensors with an integral and a floating alpha;
//   - an operator ref has no kernel for falls back to the CPU, warns once per operator, and gives
//     the CPU's result;
//   - samples of f(x) = 5 x^2 + 3 written as CSV files under WORK_DIR are read through a
//     DataLoader from the csv source, each row once, bad rows skipped with a warning;
//   - nn::Linear moved with .to(Device("ref")) trains on them with Adam, on ref.
#include <kiln/data/data.h>
#include <kiln/distributed.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

namespace fs = std::filesystem;
using kiln::Device;
using kiln::Tensor;

void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

void passed(const std::string& what) { std::cout << "ok: " << what << "\n"; }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Captures what the core prints on std::cerr while alive.
class CaptureStderr {
 public:
  CaptureStderr() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(old_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::stringstream buffer_;
  std::streambuf* old_;
};

void check_devices(const std::string& expected_default) {
  bool listed = false;
  for (const Device& d : kiln::devices()) listed = listed || d.str() == "ref:0";
  check(listed, "ref:0 is not in kiln::devices(): is the ref plugin installed?");
  Device ref("ref:0");
  check(kiln::device_description(ref).find("reference device") != std::string::npos,
        "device_description(ref:0) = " + kiln::device_description(ref));
  Tensor t = kiln::ones({2, 3}, ref);
  check(t.device() == ref, "kiln::ones on ref:0 landed on " + t.device().str());
  check(t.sum().item<float>() == 6.f, "sum of ones on ref:0 is not 6");
  check(kiln::default_device().str() == expected_default,
        "default_device() is " + kiln::default_device().str() + ", expected " + expected_default);
  passed("Device(\"ref:0\") allocates; default_device() is " + expected_default);
}

void check_moves() {
  Tensor a = kiln::arange(12, kiln::TensorOptions().dtype(kiln::kFloat)).reshape({3, 4});
  Tensor on_ref = a.to(Device("ref"));
  check(on_ref.device() == Device("ref"), "a.to(ref) is on " + on_ref.device().str());
  Tensor strided = on_ref.t();  // a view: the copy back reads strides
  Tensor back = strided.to(Device(kiln::kCPU));
  check(kiln::equal(back, a.t()), "cpu -> ref -> cpu (transposed) changed the values");
  Tensor converted = on_ref.to(kiln::kDouble);  // a conversion on ref (its copy_ kernel)
  check(converted.dtype() == kiln::kDouble && converted.device() == Device("ref"),
        "to(kDouble) on ref");
  check(kiln::equal(converted.cpu(), a.to(kiln::kDouble)), "float -> double on ref");
  passed("tensors move between cpu and ref, views and conversions included");
}

// alpha reaches a kernel as an int64 attribute when it is integral and as a float64 one
// otherwise (docs/primitives.md): a kernel that read it with the wrong accessor got the other
// kind's bits.
void check_alpha() {
  for (const char* name : {"cpu", "ref"}) {
    Device device(name);
    Tensor a = kiln::tensor({1, 2, -3}).to(device);  // int64
    Tensor b = kiln::tensor({10, 20, 30}).to(device);
    check(kiln::equal(kiln::add(a, b, 3).cpu(), kiln::tensor({31, 62, 87})),
          std::string("int64 add with alpha 3 on ") + name);
    check(kiln::equal(kiln::sub(a.to(kiln::kInt), b.to(kiln::kInt), 2).cpu(),
                      kiln::tensor({-19, -38, -63}).to(kiln::kInt)),
          std::string("int32 sub with alpha 2 on ") + name);
    Tensor x = kiln::tensor({1.5, -2.0}).to(device);  // float32
    check(kiln::equal(kiln::add(x, x, 2).cpu(), kiln::tensor({4.5, -6.0})),
          std::string("float32 add with alpha 2 on ") + name);
    check(kiln::equal(kiln::add(x, x, 0.5).cpu(), kiln::tensor({2.25, -3.0})),
          std::string("float32 add with alpha 0.5 on ") + name);
  }
  passed("add and sub read alpha by its kind on cpu and ref");
}

void check_fallback() {
  Tensor x = kiln::randn({4, 5});
  Tensor on_ref = x.to(Device("ref"));
  std::string log;
  Tensor first, second, other;
  {
    CaptureStderr capture;
    first = kiln::clamp(on_ref, -0.5, 0.5);  // ref has no clamp kernel: it runs on the CPU
    second = kiln::clamp(on_ref, -0.25, 0.75);
    other = kiln::remainder(on_ref, 0.3);  // another operator warns once too
    log = capture.text();
  }
  check(first.device() == Device("ref"), "a fallback result is on " + first.device().str());
  check(kiln::equal(first.cpu(), kiln::clamp(x, -0.5, 0.5)), "clamp on ref differs from cpu");
  check(kiln::equal(second.cpu(), kiln::clamp(x, -0.25, 0.75)), "clamp on ref differs");
  check(kiln::allclose(other.cpu(), kiln::remainder(x, 0.3)), "remainder on ref differs");
  check(count(log, "'clamp' has no kernel for device 'ref'") == 1,
        "expected one warning for clamp, got:\n" + log);
  check(count(log, "'remainder' has no kernel for device 'ref'") == 1,
        "expected one warning for remainder, got:\n" + log);
  passed("CPU fallback: CPU results, one warning per operator");
}

// Writes 4 files of 50 rows of (x, 5 x^2 + 3), x in [-2, 2], plus one bad row.
std::string write_csv(const fs::path& dir) {
  fs::create_directories(dir);
  for (int f = 0; f < 4; ++f) {
    std::ofstream out(dir / ("points-" + std::to_string(f) + ".csv"));
    out << "x,y\n";
    for (int i = 0; i < 50; ++i) {
      double x = -2.0 + 4.0 * (f * 50 + i) / 199.0;
      out << x << "," << 5 * x * x + 3 << "\n";
      if (f == 2 && i == 10) out << "1.0,2.0,3.0\n";  // three cells: skipped with a warning
    }
  }
  return "csv:" + (dir / "points-{0..3}.csv").string();
}

kiln::data::DataLoader make_loader(const std::string& spec) {
  auto ds = kiln::data::open(
      spec, kiln::data::SourceOptions().on_error(kiln::data::ErrorPolicy::Warn).shuffle(64));
  return kiln::data::DataLoader(ds, kiln::data::DataLoaderOptions(20).workers(2));
}

void check_reading(const std::string& spec) {
  kiln::data::DataLoader loader = make_loader(spec);
  int64_t rows = 0;
  double sum_x = 0;
  std::string log;
  {
    CaptureStderr capture;
    for (kiln::data::Sample& batch : loader) {
      Tensor x = batch.at("x.f32").tensor();
      Tensor y = batch.at("y.f32").tensor();
      check(x.dtype() == kiln::kFloat && x.dim() == 1, "x.f32 is not a float32 vector");
      check(kiln::allclose(y, 5 * x * x + 3, 1e-4, 1e-4), "y != 5 x^2 + 3 in a batch");
      rows += x.size(0);
      sum_x += x.sum().item<double>();
    }
    log = capture.text();
  }
  check(rows == 200, "read " + std::to_string(rows) + " rows, expected 200");
  check(std::abs(sum_x) < 1e-3, "the x values do not sum to 0: each row once?");
  check(log.find("3 cells, but the header names 2 columns") != std::string::npos,
        "no warning for the bad row:\n" + log);
  passed("200 rows read through a DataLoader from the csv source, the bad row skipped");
}

void check_training(const std::string& spec) {
  Device ref("ref");
  kiln::manual_seed(0);
  kiln::nn::Linear model(2, 1);  // y = w0 x^2 + w1 x + b
  model->to(ref);
  for (const Tensor& p : model->parameters()) check(p.device() == ref, "a parameter is not on ref");
  kiln::optim::Adam opt(model->parameters(), kiln::optim::AdamOptions(0.1));
  kiln::data::DataLoader loader = make_loader(spec);
  double last = 0;
  CaptureStderr quiet;  // the bad row's warning, once per epoch
  for (int epoch = 0; epoch < 60; ++epoch) {
    for (kiln::data::Sample& batch : loader) {
      Tensor x = batch.at("x.f32").tensor().to(ref);
      Tensor y = batch.at("y.f32").tensor().to(ref);
      Tensor features = kiln::stack({x * x, x}, 1);
      Tensor loss = kiln::nn::functional::mse_loss(model->forward(features).squeeze(1), y);
      check(loss.device() == ref, "the loss is on " + loss.device().str());
      opt.zero_grad();
      loss.backward();
      check(model->weight.grad().device() == ref, "the gradient is not on ref");
      opt.step();
      last = loss.item<double>();
    }
  }
  Tensor w = model->weight.detach().cpu().reshape({2});
  double w0 = w[0].item<double>(), w1 = w[1].item<double>();
  double b = model->bias.detach().cpu().item<double>();
  std::printf("trained on ref: w = [%.4f, %.4f], b = %.4f, loss %.3g\n", w0, w1, b, last);
  check(std::abs(w0 - 5) < 0.1 && std::abs(w1) < 0.1 && std::abs(b - 3) < 0.1,
        "the model on ref did not fit 5 x^2 + 3");
  passed("nn::Linear moved with .to(Device(\"ref\")) trains on ref");
}

}  // namespace

// The "solo" communication backend (sdk/examples/solo-comm): a world of one process through a
// file store; the collectives keep or copy the data, on ref and on cpu; send has no peer.
void check_solo_backend(const fs::path& work) {
  namespace dist = kiln::distributed;
  fs::create_directories(work);
  dist::init_process_group(dist::InitProcessGroupOptions()
                               .backend("solo")
                               .init_method("file://" + (work / "store").string())
                               .rank(0)
                               .world_size(1));
  check(dist::get_world_size() == 1 && dist::get_backend() == "solo", "solo: the group");
  Tensor t = kiln::arange(6, kiln::TensorOptions().dtype(kiln::kFloat)).to(Device("ref"));
  dist::all_reduce(t, dist::ReduceOp::AVG);
  check(t.device() == Device("ref") && t.sum().item<float>() == 15.f, "solo: all_reduce on ref");
  std::vector<Tensor> parts;
  dist::all_gather(parts, t);
  check(parts.size() == 1 && parts[0].sum().item<float>() == 15.f, "solo: all_gather");
  bool refused = false;
  try {
    dist::send(t, 0);
  } catch (const kiln::Error& e) {
    refused = std::string(e.what()).find("send") != std::string::npos;
  }
  check(refused, "solo: send to itself is an error");
  dist::destroy_process_group();
  passed("the solo communication backend runs a world of one");
}

int main(int argc, char** argv) {
  std::string expected_default = "cpu:0";
  fs::path work = fs::temp_directory_path() / "kiln_sdk_consumer";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--default=", 0) == 0) {
      expected_default = arg.substr(10);
    } else {
      work = arg;
    }
  }
  try {
    check_devices(expected_default);
    check_moves();
    check_alpha();
    check_fallback();
    std::string spec = write_csv(work / "csv");
    check_reading(spec);
    check_training(spec);
    check_solo_backend(work / "solo");
    std::cout << "sdk-consumer: all checks passed\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sdk-consumer: FAILED: " << e.what() << "\n";
    return 1;
  }
}
