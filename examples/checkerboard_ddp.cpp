// "Effective PyTorch"'s checkerboard trained with DistributedDataParallel over tar shards, one
// process per rank, started by kiln-launch:
//
//   kiln-launch --nproc-per-node 2 kiln-checkerboard-ddp [--shards DIR] [--epochs 4]
//               [--samples 64] [--size 16] [--batch 4] [--workers 1]
//
// Rank 0 writes the shards (whole boards at random points, as kiln-demo: Note [Samples are whole
// boards] in demo_steps.cpp) and the others wait at a barrier. Each rank then reads its own share
// of the shards (the source takes the rank and world size from the process group), trains its
// replica, and prints its progress (kiln-launch puts "[rankN]: " before each line); the
// gradients are averaged across ranks in backward, so the replicas stay equal, which the end
// checks.
#include <kiln/distributed.h>
#include <kiln/kiln.h>
#include <kiln/nn.h>
#include <kiln/nn/parallel/distributed.h>
#include <kiln/optim.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "checkerboard.h"
#include "options.h"

using namespace kiln;
namespace dist = kiln::distributed;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string shards = "checkerboard-ddp-shards";
  int64_t epochs = 4, samples = 64, size = 16, batch = 4, workers = 1;
};

constexpr int64_t kShards = 4;  // at least one per rank x worker, or some read nothing

Options parse(int argc, char** argv) {
  const char* me = "kiln-checkerboard-ddp";
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) throw ValueError(std::string(me) + ": " + arg + " needs a value");
    std::string value = argv[++i];
    if (arg == "--shards") {
      o.shards = value;
    } else if (arg == "--epochs") {
      o.epochs = example_options::parse_int(me, arg, value, 1, 100000);
    } else if (arg == "--samples") {
      o.samples = example_options::parse_int(me, arg, value, kShards, 1000000);
    } else if (arg == "--size") {
      o.size = example_options::parse_int(me, arg, value, 1, 1024);
    } else if (arg == "--batch") {
      o.batch = example_options::parse_int(me, arg, value, 1, 100000);
    } else if (arg == "--workers") {
      o.workers = example_options::parse_int(me, arg, value, 0, 64);
    } else {
      throw ValueError(std::string(me) + ": unknown option '" + arg + "'");
    }
  }
  return o;
}

// Rank 0's job: kShards shards of whole boards, each drawn at its own random points.
void write_shards(const Options& o) {
  fs::create_directories(o.shards);
  data::TarShardWriter writer((fs::path(o.shards) / "board-%04d.tar").string(), int64_t{1} << 30,
                              o.samples / kShards);
  manual_seed(0);
  Tensor points = checkerboard::grid(o.size, o.size);
  for (int64_t i = 0; i < o.samples / kShards * kShards; ++i) {
    Tensor input = points + rand({2, o.size, o.size}).div(static_cast<double>(o.size));
    Tensor target = checkerboard::checker_at(input, 8).unsqueeze(0);
    char key[32];
    std::snprintf(key, sizeof key, "%06lld", static_cast<long long>(i));
    writer.write(data::Sample::Map{
        {"__key__", std::string(key)}, {"input.npy", input}, {"target.npy", target}});
  }
  writer.close();
  std::printf("wrote %zu shards of %lld boards in %s\n", writer.shards().size(),
              static_cast<long long>(o.samples / kShards * kShards), o.shards.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const ValueError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  try {
    dist::init_process_group();  // gloo, env:// (kiln-launch sets RANK, WORLD_SIZE, ...)
    int rank = dist::get_rank(), world = dist::get_world_size();
    if (rank == 0) write_shards(o);
    dist::barrier();

    std::string url = "tar:" + (fs::path(o.shards) / "board-{0000..0003}.tar").string();
    auto source = data::open(url, data::SourceOptions().shuffle(8, 4));  // this rank's share
    data::DataLoader loader(
        source, data::DataLoaderOptions(o.batch).workers(o.workers).drop_last(true).seed(0));
    manual_seed(rank);  // replicas start apart: DistributedDataParallel broadcasts rank 0's
    nn::Sequential net = checkerboard::make_net();
    auto ddp = nn::parallel::DistributedDataParallel(net);  // wraps the Sequential itself
    optim::Adam opt(ddp->parameters(), optim::AdamOptions(0.01));
    std::printf("rank %d of %d: %s, batches of %lld\n", rank, world, url.c_str(),
                static_cast<long long>(o.batch));
    std::fflush(stdout);
    double loss_value = 0;
    for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
      int64_t steps = 0, samples = 0;
      double sum = 0;
      for (data::Sample& batch : loader) {
        Tensor inputs = batch.at("input.npy").tensor();    // [B, 2, size, size]
        Tensor targets = batch.at("target.npy").tensor();  // [B, 1, size, size]
        opt.zero_grad();
        Tensor loss = nn::functional::mse_loss(ddp->forward(inputs), targets);
        loss.backward();  // gradients averaged over the ranks
        opt.step();
        sum += loss.item<double>();
        ++steps;
        samples += inputs.size(0);
      }
      loss_value = steps > 0 ? sum / static_cast<double>(steps) : 0;
      std::printf("epoch %lld: %lld steps on %lld samples of this rank, mean loss %.4f\n",
                  static_cast<long long>(epoch + 1), static_cast<long long>(steps),
                  static_cast<long long>(samples), loss_value);
      std::fflush(stdout);
    }
    // the replicas are equal: every parameter's largest difference from rank 0's is 0
    double worst = 0;
    for (Tensor p : net->parameters()) {
      Tensor mine = p.detach().clone(), first = p.detach().clone();
      dist::broadcast(first, 0);
      worst = std::max(worst, (mine - first).abs().max().item<double>());
    }
    Tensor losses = full({1}, loss_value, TensorOptions().dtype(kDouble));
    dist::all_reduce(losses, dist::ReduceOp::AVG);
    if (rank == 0) {
      std::printf("last epoch's loss, mean over %d ranks: %.4f\n", world, losses.item<double>());
    }
    std::printf("replicas equal: %s\n", worst == 0 ? "yes" : "no");
    dist::destroy_process_group();
    return worst == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
