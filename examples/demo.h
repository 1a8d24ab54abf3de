// kiln-demo's parts: its options (demo.cpp), the training demo (demo_train.cpp, demo_steps.cpp)
// and the tensor tour (demo_tour.cpp).
#pragma once

#include <kiln/amp.h>
#include <kiln/device.h>
#include <kiln/nn.h>
#include <kiln/optim.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct DemoOptions {
  bool tour = false;      // --tour: the tensor examples instead of the training demo
  bool quick = false;     // --quick: a small run for CI (the tour: one timing repeat)
  std::string out;        // --out: folder for shards, checkpoint and pictures
  int64_t size = 40;      // --size: side of each sample, in points
  int64_t samples = 128;  // --samples: samples written to the shards
  int64_t squares = 8;    // --squares: squares along each side ("Effective PyTorch"'s freq)
  int64_t steps = 1000;   // --steps: optimizer steps of each run (float32, then autocast)
  int64_t warmup = 5;     // --warmup: first steps of each run left out of the timing
  int64_t batch = 1;      // --batch: samples per batch
  int64_t workers = 2;    // --workers: DataLoader worker threads
};

// The samples are spread over kShards shards.
constexpr int64_t kShards = 4;
// Side of the pictures of what the networks learned.
constexpr int64_t kPictureSide = 256;
// "Effective PyTorch"'s optimizer: Adam with learning rate 0.001.
constexpr double kLearningRate = 0.001;

// demo_steps.cpp: options.samples views of the checkerboard, each at size x size points jittered
// within their pixels, written as tar shards under `folder` with a progress bar; returns the
// shards' URL for kiln::data::open.
std::string write_shards(const DemoOptions& options, const std::string& folder);

// One training run and what it measured.
struct TrainingRun {
  kiln::nn::Sequential net;
  std::unique_ptr<kiln::optim::Adam> optimizer;
  std::unique_ptr<kiln::amp::GradScaler> scaler;
  std::vector<double> losses;     // per step
  std::vector<std::string> keys;  // the samples' keys, in the order trained on
  int64_t timed_steps = 0;        // steps after the warmup
  double timed_seconds = 0;       // their wall time, loading included
  double waiting_seconds = 0;     // the part of it spent waiting for the DataLoader
  double timed_cpu_seconds = 0;   // CPU time of the process (all threads) in those steps
};

// demo_steps.cpp: "Effective PyTorch"'s network trained for options.steps steps on batches of the
// shards at `url` through a DataLoader, in float32 or under autocast with a GradScaler (`mixed`),
// with a live progress line. Both runs start from the same seed and see the same batches.
TrainingRun train(const DemoOptions& options, const std::string& url, bool mixed,
                  kiln::Device device);

// The tensor examples of "Effective PyTorch" on `device`.
void run_tour(kiln::Device device, bool quick);

// Writes the shards, trains in float32 and under autocast, checkpoints, draws: see demo.cpp.
void run_training_demo(const DemoOptions& options, kiln::Device device);
