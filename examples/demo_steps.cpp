// kiln-demo's data and training loop: views of the checkerboard packed into tar shards, then read
// back by a DataLoader with worker threads to train "Effective PyTorch"'s network.
#include <kiln/data/data.h>
#include <kiln/kiln.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "checkerboard.h"
#include "demo.h"
#include "status_line.h"

namespace data = kiln::data;
namespace fs = std::filesystem;
using kiln::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// User and system CPU time of the process so far, all threads.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto add = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return add(usage.ru_utime) + add(usage.ru_stime);
}

std::string progress_bar(int64_t done, int64_t total, int width) {
  auto filled = static_cast<int>(done * width / std::max<int64_t>(total, 1));
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), '.') + "]";
}

std::string format(const char* fmt, auto... args) {
  char text[256];
  std::snprintf(text, sizeof text, fmt, args...);
  return text;
}

}  // namespace

// Note [Samples are whole boards]: each sample is the whole checkerboard at one point drawn in
// each of its size x size pixels, not a tile of one picture. "Effective PyTorch" trains on the
// whole picture at every step, and its network needs that: with batches of tiles, batch norm's
// statistics change with the tiles drawn and the loss stays near an even grey's (0.25) for
// hundreds of steps; batches of whole boards learn the squares in a few hundred steps, and since
// no two samples share their points, the picture drawn afterwards on a regular grid (in eval
// mode, with the running statistics) shows the board the network learned, not the points.
std::string write_shards(const DemoOptions& options, const std::string& folder) {
  fs::create_directories(folder);
  const int64_t per_shard = options.samples / kShards;
  const auto side = static_cast<double>(options.size);
  Tensor points = checkerboard::grid(options.size, options.size);  // [2, P, P], pixel corners
  std::string pattern = (fs::path(folder) / "checkerboard-%04d.tar").string();
  data::TarShardWriter writer(pattern, int64_t{1} << 30, per_shard);
  StatusLine status;
  auto start = Clock::now();
  kiln::manual_seed(0);
  for (int64_t i = 0; i < options.samples; ++i) {
    // A point drawn in each pixel: every sample sees the whole board, at other points.
    Tensor input = points + kiln::rand({2, options.size, options.size}).div(side);
    Tensor target =
        checkerboard::checker_at(input, static_cast<double>(options.squares)).unsqueeze(0);
    writer.write(data::Sample::Map{{"__key__", format("%06lld", static_cast<long long>(i))},
                                   {"input.npy", input.contiguous()},
                                   {"target.npy", target.contiguous()}});
    bool shard_done = (i + 1) % per_shard == 0;
    status.show(format("  writing %s %lld/%lld samples, shard %lld of %lld",
                       progress_bar(i + 1, options.samples, 30).c_str(),
                       static_cast<long long>(i + 1), static_cast<long long>(options.samples),
                       static_cast<long long>(std::min(i / per_shard + 1, kShards)),
                       static_cast<long long>(kShards)),
                shard_done);
  }
  writer.close();
  KILN_INTERNAL_ASSERT(static_cast<int64_t>(writer.shards().size()) == kShards,
                       "kiln-demo: ", writer.shards().size(), " shards written, not ", kShards);
  uintmax_t bytes = 0;
  for (const std::string& shard : writer.shards()) bytes += fs::file_size(shard);
  status.done(format("  wrote %zu shards, %lld samples of %lldx%lld points, %.1f MB in %.2f s",
                     writer.shards().size(), static_cast<long long>(options.samples),
                     static_cast<long long>(options.size), static_cast<long long>(options.size),
                     static_cast<double>(bytes) / 1e6, seconds(Clock::now() - start)));
  std::string shards =
      format("checkerboard-{0000..%04lld}.tar", static_cast<long long>(kShards - 1));
  return "tar:" + (fs::path(folder) / shards).string();
}

TrainingRun train(const DemoOptions& options, const std::string& url, bool mixed,
                  kiln::Device device) {
  kiln::manual_seed(0);
  TrainingRun run;
  run.net = checkerboard::make_net();
  run.net->to(device);
  run.optimizer = std::make_unique<kiln::optim::Adam>(run.net->parameters(),
                                                      kiln::optim::AdamOptions(kLearningRate));
  run.scaler =
      std::make_unique<kiln::amp::GradScaler>(kiln::amp::GradScalerOptions().set_enabled(mixed));

  // The same epochs in both runs: the loader's seed fixes each epoch's shuffle.
  const int64_t buffer = std::min<int64_t>(64, options.samples / kShards);
  auto dataset = data::open(url, data::SourceOptions().shuffle(buffer, buffer / 2));
  auto loader_options = data::DataLoaderOptions(options.batch)
                            .workers(options.workers)
                            .drop_last(true)
                            .seed(0)
                            .timeout(std::chrono::seconds(60));
  if (options.workers > 0) loader_options.persistent_workers(true);
  data::DataLoader loader(dataset, loader_options);

  StatusLine status;
  const char* name = mixed ? "autocast" : "float32 ";
  const int64_t log_every = std::max<int64_t>(1, options.steps / 10);
  auto start = Clock::now(), timed_start = start;
  double step_ms = 0;  // moving average
  double cpu_start = cpu_seconds();
  int64_t step = 0;
  while (step < options.steps) {
    int64_t epoch_batches = 0;
    auto fetch = Clock::now();
    for (auto it = loader.begin(); it != loader.end();) {
      if (step == options.warmup) {
        timed_start = fetch;
        cpu_start = cpu_seconds();
      }
      if (step >= options.warmup) run.waiting_seconds += seconds(Clock::now() - fetch);
      for (const data::Sample& key : it->at("__key__").list()) run.keys.push_back(key.str());
      Tensor inputs = it->at("input.npy").tensor().to(device);    // [B, 2, P, P]
      Tensor targets = it->at("target.npy").tensor().to(device);  // [B, 1, P, P]
      run.optimizer->zero_grad();
      Tensor loss;
      {
        kiln::amp::autocast region(device.type(), std::nullopt, mixed);
        loss = kiln::nn::functional::mse_loss(run.net->forward(inputs), targets);
      }
      run.scaler->scale(loss).backward();
      run.scaler->step(*run.optimizer);
      run.scaler->update();
      run.losses.push_back(loss.item<double>());
      ++step;
      ++epoch_batches;

      double ms = seconds(Clock::now() - fetch) * 1e3;
      step_ms = step == 1 ? ms : 0.9 * step_ms + 0.1 * ms;
      bool milestone = step == 1 || step % log_every == 0 || step == options.steps;
      status.show(format("  %s step %4lld/%lld  loss %.4f  %7.1f ms/step  %7.0f samples/s", name,
                         static_cast<long long>(step), static_cast<long long>(options.steps),
                         run.losses.back(), step_ms,
                         static_cast<double>(options.batch) * 1e3 / step_ms),
                  milestone);
      if (step == options.steps) break;
      fetch = Clock::now();
      ++it;
    }
    KILN_CHECK(epoch_batches > 0, "kiln-demo: an epoch of ", url, " gave no batch of ",
               options.batch, " samples with ", options.workers, " workers: lower --batch");
  }
  auto stop = Clock::now();
  run.timed_steps = options.steps - options.warmup;
  run.timed_seconds = seconds(stop - timed_start);
  run.timed_cpu_seconds = cpu_seconds() - cpu_start;
  status.done(format("  %s %lld steps in %.1f s, last loss %.4f", name,
                     static_cast<long long>(options.steps), seconds(stop - start),
                     run.losses.back()));
  return run;
}
