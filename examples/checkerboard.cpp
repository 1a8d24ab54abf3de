// The seed's mixed-precision example: a network of four 1x1 convolutions with batch norm and ReLU
// learns a checkerboard from pixel coordinates. It trains once in float32 and once under
// autocast + GradScaler (bfloat16 on the CPU), printing the loss and the time per step of each,
// and writes a PNG with each run's output beside the target.
//
//   kiln-checkerboard [--size 128] [--steps 200] [--png checkerboard.png] [--mode both|fp32|amp]
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

#ifdef KILN_EXAMPLE_PNG
#include <png.h>
#endif

using namespace kiln;

namespace {

// [2, height, width]: x / width and y / height, as the seed's grid().
Tensor grid(int64_t width, int64_t height) {
  Tensor h = arange(width).unsqueeze(0).repeat({height, 1}).div(static_cast<double>(width));
  Tensor v = arange(height).unsqueeze(1).repeat({1, width}).div(static_cast<double>(height));
  return stack({h, v}, 0);
}

// [height, width] of 0 and 1 squares, `freq` per side, as the seed's checker().
Tensor checker(int64_t width, int64_t height, double freq) {
  Tensor h = arange(width).reshape({1, width}).mul(freq / static_cast<double>(width) / 2.0);
  Tensor v = arange(height).reshape({height, 1}).mul(freq / static_cast<double>(height) / 2.0);
  return logical_xor(gt(fmod(h, 1.0), 0.5), gt(fmod(v, 1.0), 0.5)).to(kFloat);
}

nn::Sequential make_net() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 256, 1)), nn::BatchNorm2d(256), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(256, 256, 1)), nn::BatchNorm2d(256),
                        nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(256, 256, 1)),
                        nn::BatchNorm2d(256), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(256, 1, 1)));
}

struct RunResult {
  double final_loss = 0;
  double ms_per_step = 0;
  Tensor output;  // [height, width] float32
};

RunResult train(const Tensor& inputs, const Tensor& targets, int steps, bool mixed,
                Device device) {
  manual_seed(0);
  nn::Sequential net = make_net();
  net->to(device);
  optim::Adam opt(net->parameters(), optim::AdamOptions(0.001));
  amp::GradScaler scaler(amp::GradScalerOptions().set_enabled(mixed));
  RunResult r;
  Tensor outputs, loss;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) {
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
  r.final_loss = loss.item<double>();
  r.ms_per_step = std::chrono::duration<double, std::milli>(stop - start).count() / steps;
  r.output = outputs.detach().to(kFloat).cpu().squeeze();
  return r;
}

// Writes rows of panels side by side as an 8-bit grey PNG (values clamped to [0, 1]).
bool write_png(const std::string& path, const std::vector<Tensor>& panels) {
#ifdef KILN_EXAMPLE_PNG
  int64_t h = panels[0].size(0), w = panels[0].size(1);
  int64_t gap = 4, width = static_cast<int64_t>(panels.size()) * (w + gap) - gap;
  std::vector<png_byte> pixels(static_cast<size_t>(width * h), 255);
  for (size_t p = 0; p < panels.size(); ++p) {
    Tensor img = clamp(panels[p], 0.0, 1.0).contiguous();
    const float* data = img.data_ptr<float>();
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        size_t at = static_cast<size_t>(y * width + static_cast<int64_t>(p) * (w + gap) + x);
        pixels[at] = static_cast<png_byte>(data[y * w + x] * 255.0f + 0.5f);
      }
    }
  }
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(h), 8,
               PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < h; ++y) png_write_row(png, &pixels[static_cast<size_t>(y * width)]);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(file);
  return true;
#else
  (void)path;
  (void)panels;
  return false;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  int64_t size = 128;
  int steps = 200;
  std::string png = "checkerboard.png", mode = "both";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--size" && has_value) {
      size = std::atoll(argv[++i]);
    } else if (arg == "--steps" && has_value) {
      steps = std::atoi(argv[++i]);
    } else if (arg == "--png" && has_value) {
      png = argv[++i];
    } else if (arg == "--mode" && has_value) {
      mode = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--size N] [--steps N] [--png FILE] [--mode both|fp32|amp]\n",
                   argv[0]);
      return 2;
    }
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
      RunResult r = train(inputs, targets, steps, mixed, device);
      std::printf("%s: final loss %.4f, %.2f ms/step\n", mixed ? "autocast" : "float32 ",
                  r.final_loss, r.ms_per_step);
      panels.push_back(r.output);
    }
    panels.push_back(targets.cpu().squeeze());
    if (!png.empty()) {
      if (write_png(png, panels)) {
        std::printf("wrote %s (%s, target)\n", png.c_str(),
                    mode == "both" ? "float32, autocast" : mode.c_str());
      } else {
        std::printf("no PNG written (%s)\n", "libpng missing or file not writable");
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
