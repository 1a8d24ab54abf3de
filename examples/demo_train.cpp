// kiln-demo's training demo, in five parts: tar shards, a float32 run, an autocast + GradScaler
// run on the same batches (and the speed-up), a checkpoint saved and reloaded, and pictures.
#include <kiln/kiln.h>
#include <kiln/serialize.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "checkerboard.h"
#include "demo.h"
#include "png_image.h"

namespace fs = std::filesystem;
using kiln::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The network's picture of the whole [1, 2, S, S] grid, in eval mode: [S, S] float32 on the CPU.
Tensor predict(const kiln::nn::Sequential& net, const Tensor& grid) {
  net->eval();
  Tensor out;
  {
    kiln::NoGradGuard no_grad;
    out = net->forward(grid).to(kiln::kFloat).cpu().squeeze();
  }
  net->train();
  return out;
}

// The GradScaler's state_dict() as float64 scalars in a safetensors file, and back.
void save_scaler(const kiln::amp::GradScaler& scaler, const std::string& path) {
  kiln::NamedTensors tensors;
  for (const auto& [name, value] : scaler.state_dict()) {
    tensors.emplace_back(name, kiln::full({}, value, kiln::kDouble));
  }
  kiln::save(tensors, path);
}

void load_scaler(kiln::amp::GradScaler& scaler, const std::string& path) {
  std::map<std::string, double> state;
  for (const auto& [name, t] : kiln::load(path)) {
    KILN_CHECK_VALUE(t.numel() == 1 && t.dtype() == kiln::kDouble, "kiln-demo: ", path,
                     ": GradScaler field '", name, "' is ", t.sizes(), " ",
                     kiln::dtype_name(t.dtype()), ", expected one float64 value");
    state[name] = t.item<double>();
  }
  scaler.load_state_dict(state);  // names a missing field
}

// One training step under autocast on `batch` = {inputs, targets}.
void train_step(TrainingRun& run, const std::pair<Tensor, Tensor>& batch, kiln::Device device) {
  run.optimizer->zero_grad();
  Tensor loss;
  {
    kiln::amp::autocast region(device.type());
    loss = kiln::nn::functional::mse_loss(run.net->forward(batch.first), batch.second);
  }
  run.scaler->scale(loss).backward();
  run.scaler->step(*run.optimizer);
  run.scaler->update();
}

// The largest difference between two models' parameters of the same names.
double max_parameter_difference(const kiln::nn::Sequential& a, const kiln::nn::Sequential& b) {
  auto pa = a->named_parameters(), pb = b->named_parameters();
  KILN_INTERNAL_ASSERT(pa.size() == pb.size(), "kiln-demo: models differ in parameters");
  double most = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    most = std::max(most, (pa[i].value() - pb[i].value()).abs().max().item<double>());
  }
  return most;
}

// Saves the run's model, optimizer and scaler under `folder`, reloads them into new objects and
// checks that the reloaded model draws the same picture, and that one more training step from
// the checkpoint equals one more step of the run (which needs Adam's and the scaler's state).
void checkpoint(TrainingRun& run, const Tensor& grid, const std::pair<Tensor, Tensor>& batch,
                const fs::path& folder, kiln::Device device) {
  fs::create_directories(folder);
  std::string model = (folder / "model.safetensors").string();
  std::string optimizer = (folder / "optimizer.safetensors").string();
  std::string scaler = (folder / "grad_scaler.safetensors").string();
  kiln::save(*run.net, model);
  kiln::save(*run.optimizer, optimizer);
  save_scaler(*run.scaler, scaler);
  std::printf("  saved %s: model.safetensors, optimizer.safetensors, grad_scaler.safetensors\n",
              folder.string().c_str());

  kiln::manual_seed(1);  // other initial weights, so that a load that did nothing would show
  kiln::nn::Sequential net = checkerboard::make_net();
  net->to(device);
  kiln::load(*net, model);
  TrainingRun reloaded;
  reloaded.net = net;
  reloaded.optimizer = std::make_unique<kiln::optim::Adam>(net->parameters(),
                                                           kiln::optim::AdamOptions(kLearningRate));
  kiln::load(*reloaded.optimizer, optimizer);
  reloaded.scaler = std::make_unique<kiln::amp::GradScaler>();
  load_scaler(*reloaded.scaler, scaler);

  Tensor before = predict(run.net, grid), after = predict(net, grid);
  double difference = (before - after).abs().max().item<double>();
  std::printf("  reloaded into a new model, Adam and GradScaler (scale %g, was %g)\n",
              reloaded.scaler->get_scale(), run.scaler->get_scale());
  std::printf("  reloaded model gives the same outputs: %s (max |difference| %g over %lld "
              "pixels)\n",
              difference == 0 ? "yes" : "no", difference, static_cast<long long>(before.numel()));
  train_step(run, batch, device);
  train_step(reloaded, batch, device);
  double step_difference = max_parameter_difference(run.net, reloaded.net);
  std::printf("  one more step from the checkpoint equals one more step of the run: %s "
              "(max |difference| of the parameters %g)\n",
              step_difference == 0 ? "yes" : "no", step_difference);
}

double ms_per_step(const TrainingRun& run, double seconds) {
  return seconds / static_cast<double>(run.timed_steps) * 1e3;
}

// The chart's top: the round number of tenths at or above the largest loss after the first 10
// steps (the first ones, far higher, run off the top).
double chart_top(const std::vector<double>& a, const std::vector<double>& b) {
  double top = 0.1;
  for (const std::vector<double>* losses : {&a, &b}) {
    for (size_t i = std::min<size_t>(10, losses->size() - 1); i < losses->size(); ++i) {
      top = std::max(top, (*losses)[i]);
    }
  }
  return std::ceil(top * 10 - 1e-9) / 10;
}

// The mean of each window of `window` steps ending at each step (fewer at the start).
std::vector<double> moving_average(const std::vector<double>& values, size_t window) {
  std::vector<double> out(values.size());
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    sum += values[i];
    if (i >= window) sum -= values[i - window];
    out[i] = sum / static_cast<double>(std::min(i + 1, window));
  }
  return out;
}

// The loss chart: each run's losses per step, pale, and their average over 20 steps on top.
void write_loss_chart(const TrainingRun& fp32, const TrainingRun& mixed, const std::string& path) {
  const example_image::Rgb blue{31, 119, 180}, orange{255, 127, 14};
  const example_image::Rgb pale_blue{165, 200, 225}, pale_orange{255, 205, 160};
  double top = chart_top(fp32.losses, mixed.losses);
  example_image::line_chart({{fp32.losses, pale_blue, ""},
                             {mixed.losses, pale_orange, ""},
                             {moving_average(fp32.losses, 20), blue, "float32"},
                             {moving_average(mixed.losses, 20), orange, "autocast"}},
                            720, 300, top, 0.05)
      .write_png(path);
  std::printf("  wrote %s: training loss per step from 0 to %.1f (grid lines every 0.05), "
              "float32 blue, autocast orange, pale: each step, dark: mean of 20 steps\n",
              path.c_str(), top);
}

}  // namespace

void run_training_demo(const DemoOptions& options, kiln::Device device) {
  auto start = Clock::now();
  fs::path out = fs::absolute(options.out);
  std::error_code error;
  fs::create_directories(out, error);
  KILN_CHECK(!error && fs::is_directory(out), "kiln-demo: --out ", options.out,
             ": cannot make that folder (", error ? error.message() : "a file is in the way",
             "): give another --out");
  const char* autocast_dtype = kiln::dtype_name(kiln::amp::get_autocast_dtype(device.type()));
  const long long steps = options.steps, batch = options.batch;
  std::printf("Effective PyTorch's checkerboard network, trained from tar shards on %s.\n"
              "Output folder: %s\n",
              device.str().c_str(), out.string().c_str());

  std::printf("\n[1/5] Samples of the checkerboard (%lld squares a side) written as %lld tar "
              "shards\n",
              static_cast<long long>(options.squares), static_cast<long long>(kShards));
  std::string url = write_shards(options, (out / "shards").string());

  std::printf("\n[2/5] float32: %lld Adam steps on batches of %lld sample%s (%lld points) "
              "read from %s by a DataLoader with %lld workers\n",
              steps, batch, batch == 1 ? "" : "s", batch * options.size * options.size, url.c_str(),
              static_cast<long long>(options.workers));
  TrainingRun fp32 = train(options, url, false, device);
  std::printf("\n[3/5] autocast (%s) with GradScaler: the same %lld steps on the same batches\n",
              autocast_dtype, steps);
  TrainingRun mixed = train(options, url, true, device);

  bool same_batches = fp32.keys == mixed.keys;
  std::printf("\nSteps %lld to %lld of each run (the first %lld are warmup), data loading "
              "included; the same batches in both runs: %s (%zu samples compared by key)\n",
              static_cast<long long>(options.warmup) + 1, steps,
              static_cast<long long>(options.warmup), same_batches ? "yes" : "no",
              fp32.keys.size());
  for (const TrainingRun* run : {&fp32, &mixed}) {
    double ms = ms_per_step(*run, run->timed_seconds);
    std::printf("  %s  %7.1f ms/step  %7.1f samples/s  CPU %7.1f ms/step  (waiting for data "
                "%.1f ms/step)\n",
                run == &fp32 ? "float32 " : "autocast", ms, static_cast<double>(batch) * 1e3 / ms,
                ms_per_step(*run, run->timed_cpu_seconds), ms_per_step(*run, run->waiting_seconds));
  }
  std::printf("  speed-up of autocast + GradScaler over float32: %.2fx in time, %.2fx in CPU time\n"
              "  (CPU time is the work kiln does on all its threads; on a busy machine, time also "
              "counts\n  how long its threads wait for the cores other programs hold)\n",
              fp32.timed_seconds / mixed.timed_seconds,
              fp32.timed_cpu_seconds / mixed.timed_cpu_seconds);

  Tensor grid = checkerboard::grid(kPictureSide, kPictureSide).unsqueeze(0).to(device);
  Tensor target =
      checkerboard::checker(kPictureSide, kPictureSide, static_cast<double>(options.squares));
  Tensor fp32_picture = predict(fp32.net, grid), mixed_picture = predict(mixed.net, grid);
  std::printf("\n[4/5] Checkpoint of the autocast run\n");
  // A batch for the step after the checkpoint: the board at the points of one sample's grid.
  Tensor points = checkerboard::grid(options.size, options.size);
  std::pair<Tensor, Tensor> resume_batch{
      points.unsqueeze(0).to(device),
      checkerboard::checker_at(points, static_cast<double>(options.squares))
          .unsqueeze(0)
          .unsqueeze(0)
          .to(device)};
  checkpoint(mixed, grid, resume_batch, out / "checkpoint", device);

  std::printf("\n[5/5] What the networks learned (before that step)\n");
  auto picture_loss = [&](const Tensor& picture) {
    return kiln::nn::functional::mse_loss(picture, target).item<double>();
  };
  std::printf("  loss on the whole picture (eval mode): float32 %.4f, autocast %.4f "
              "(an even grey would score 0.25)\n",
              picture_loss(fp32_picture), picture_loss(mixed_picture));
  if (example_image::png_available()) {
    std::string learned = (out / "learned.png").string(), loss = (out / "loss.png").string();
    example_image::side_by_side({fp32_picture, mixed_picture, target},
                                {"float32", "autocast", "target"}, 6, {70, 110, 200})
        .write_png(learned);
    std::printf("  wrote %s: float32 | autocast | target\n", learned.c_str());
    write_loss_chart(fp32, mixed, loss);
  } else {
    std::printf("  no PNG written: kiln-demo was built without libpng (apt-get install "
                "libpng-dev, then configure again)\n");
  }
  std::printf("\nDone in %.1f s.\n", seconds_since(start));
}
