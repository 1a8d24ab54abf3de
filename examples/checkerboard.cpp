// The mixed-precision example of "Effective PyTorch" ("Faster training with automatic mixed
// precision"): a network of four 1x1 convolutions with batch norm and ReLU learns a checkerboard
// from pixel coordinates. It trains once in float32 and once under autocast + GradScaler (bfloat16
// on the CPU), printing the loss and the time per step of each, and writes a PNG with each run's
// output beside the target.
//
//   kiln-checkerboard [--size 128] [--steps 200] [--png checkerboard.png] [--mode both|fp32|amp]
//                     [--profile trace.json]
#include <kiln/amp.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "checkerboard.h"
#include "options.h"
#include "png_image.h"

using namespace kiln;
using checkerboard::checker;
using checkerboard::grid;
using checkerboard::make_net;

namespace {

struct RunResult {
  double final_loss = 0;
  double ms_per_step = 0;
  Tensor output;  // [height, width] float32
};

RunResult train(const Tensor& inputs, const Tensor& targets, int steps, bool mixed, Device device,
                const std::string& profile) {
  manual_seed(0);
  nn::Sequential net = make_net();
  net->to(device);
  optim::Adam opt(net->parameters(), optim::AdamOptions(0.001));
  amp::GradScaler scaler(amp::GradScalerOptions().set_enabled(mixed));
  RunResult r;
  Tensor outputs, loss;
  auto start = std::chrono::steady_clock::now();
  example_options::ProfileRun profiling(profile);
  for (int i = 0; i < steps; ++i) {
    profiler::record_function step_range("train_step");
    opt.zero_grad();
    {
      amp::autocast region(device.type(), std::nullopt, mixed);
      outputs = net->forward(inputs);
      loss = nn::functional::mse_loss(outputs, targets);
    }
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    if (i % 50 == 0 || i == steps - 1) {
      std::printf("  %s step %4d  loss %.4f\n", mixed ? "autocast" : "float32 ", i,
                  loss.item<double>());
    }
  }
  auto stop = std::chrono::steady_clock::now();
  profiling.finish();
  r.final_loss = loss.item<double>();
  r.ms_per_step = std::chrono::duration<double, std::milli>(stop - start).count() / steps;
  r.output = outputs.detach().to(kFloat).cpu().squeeze();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t size = 128;
  int steps = 200;
  std::string png = "checkerboard.png", mode = "both", profile;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) {
        throw ValueError("kiln-checkerboard: unknown option '" + arg + "'");
      }
      if (i + 1 >= argc) throw ValueError("kiln-checkerboard: " + arg + " needs a value");
      std::string value = argv[++i];
      if (arg == "--size") {
        size = example_options::parse_int("kiln-checkerboard", arg, value, 1, 4096);
      } else if (arg == "--steps") {
        steps = static_cast<int>(example_options::parse_int("kiln-checkerboard", arg, value, 1,
                                                            1000000));
      } else if (arg == "--png") {
        png = value;
      } else if (arg == "--profile") {
        profile = value;
      } else if (arg == "--mode") {
        mode = value;
        KILN_CHECK_VALUE(mode == "both" || mode == "fp32" || mode == "amp",
                         "kiln-checkerboard: --mode: expected both, fp32 or amp, got '", mode, "'");
      } else {
        throw ValueError("kiln-checkerboard: unknown option '" + arg + "'");
      }
    }
  } catch (const ValueError& e) {
    std::fprintf(stderr,
                 "%s\nusage: %s [--size N] [--steps N] [--png FILE] "
                 "[--mode both|fp32|amp] [--profile TRACE.json]\n",
                 e.what(), argv[0]);
    return 2;
  }
  try {
    Device device = default_device();
    std::printf("checkerboard %lldx%lld, %d Adam steps on %s (autocast dtype %s)\n",
                static_cast<long long>(size), static_cast<long long>(size), steps,
                device.str().c_str(), dtype_name(amp::get_autocast_dtype(device.type())));
    Tensor inputs = grid(size, size).unsqueeze(0).to(device);
    Tensor targets = checker(size, size, 8).unsqueeze(0).unsqueeze(1).to(device);
    std::vector<Tensor> panels;
    for (bool mixed : {false, true}) {
      if ((mixed && mode == "fp32") || (!mixed && mode == "amp")) continue;
      // the profile of the second run (when both run) goes to FILE with "-amp" before .json
      std::string path = profile;
      if (!path.empty() && mixed && mode == "both") {
        size_t dot = path.rfind(".json");
        path = dot == std::string::npos ? path + "-amp" : path.insert(dot, "-amp");
      }
      RunResult r = train(inputs, targets, steps, mixed, device, path);
      std::printf("%s: final loss %.4f, %.2f ms/step\n", mixed ? "autocast" : "float32 ",
                  r.final_loss, r.ms_per_step);
      panels.push_back(r.output);
    }
    panels.push_back(targets.cpu().squeeze());
    if (!png.empty() && example_image::png_available()) {
      example_image::side_by_side(panels, {}, 4, {255, 255, 255}).write_png(png);
      std::printf("wrote %s (%s, target)\n", png.c_str(),
                  mode == "both" ? "float32, autocast" : mode.c_str());
    } else if (!png.empty()) {
      std::printf("no PNG written: built without libpng\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
