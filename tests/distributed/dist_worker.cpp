// One rank of a distributed test, started by test_distributed (spawn.hpp) with RANK, WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT set, and KILN_TEST_TIMEOUT_MS the groups' timeout.
//
//   dist_worker SCENARIO
//
// Exit status 0: the scenario's checks passed on this rank; 1: one failed (stderr says which);
// 2: an unexpected exception. What each scenario checks is written above its function.
#include <kiln/distributed.h>
#include <kiln/distributed/optim/zero_redundancy_optimizer.h>
#include <kiln/kiln.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace dist = kiln::distributed;
using kiln::Tensor;

int g_failures = 0;

// This process's rank for messages: RANK, or OpenMPI's under mpirun.
std::string rank_text() {
  for (const char* v : {"RANK", "OMPI_COMM_WORLD_RANK"}) {
    if (const char* r = std::getenv(v)) return r;
  }
  return "?";
}

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "rank " << rank_text() << ": FAILED: " << what << "\n";
    ++g_failures;
  }
}

std::chrono::milliseconds test_timeout() {
  const char* t = std::getenv("KILN_TEST_TIMEOUT_MS");
  return std::chrono::milliseconds(t ? std::atol(t) : 20000);
}

// KILN_TEST_BACKEND picks the backend (gloo by default).
std::string backend() {
  const char* b = std::getenv("KILN_TEST_BACKEND");
  return b ? b : "gloo";
}

void init() {
  dist::init_process_group(
      dist::InitProcessGroupOptions().backend(backend()).timeout(test_timeout()));
}

// Rank r's input of n elements: small integers, exact in every dtype and their products too.
Tensor input(int rank, int64_t n, kiln::ScalarType dtype) {
  Tensor i = kiln::arange(n, kiln::TensorOptions().dtype(kiln::kDouble));
  Tensor v = kiln::remainder((i + 1) * (rank + 1), 5.0) + 1;  // 1..5
  if (dtype == kiln::kBool) v = kiln::remainder(i + rank, 2.0);
  return v.to(dtype);
}

Tensor expected_reduce(int size, int64_t n, kiln::ScalarType dtype, dist::ReduceOp op) {
  std::vector<Tensor> all;
  for (int r = 0; r < size; ++r) all.push_back(input(r, n, dtype).to(kiln::kDouble));
  Tensor s = kiln::stack(all, 0);
  switch (op) {
    case dist::ReduceOp::SUM: return s.sum({0});
    case dist::ReduceOp::AVG: return s.sum({0}) / size;
    case dist::ReduceOp::MIN: return kiln::amin(s, {0});
    case dist::ReduceOp::MAX: return kiln::amax(s, {0});
    case dist::ReduceOp::PRODUCT: return kiln::prod(s, 0);
  }
  return s;
}

bool same(const Tensor& got, const Tensor& want, kiln::ScalarType dtype) {
  Tensor g = got.to(kiln::kDouble), w = want.to(dtype).to(kiln::kDouble);
  double tol = (dtype == kiln::kHalf || dtype == kiln::kBFloat16) ? 1e-2 : 1e-6;
  return g.sizes() == w.sizes() && (g - w).abs().max().item<double>() <= tol * 10;
}

const std::vector<kiln::ScalarType> kDtypes = {kiln::kBool,  kiln::kByte,     kiln::kChar,
                                               kiln::kShort, kiln::kInt,      kiln::kLong,
                                               kiln::kHalf,  kiln::kBFloat16, kiln::kFloat,
                                               kiln::kDouble};

// Every collective on every dtype against values computed here; sub-groups; point to point.
void collectives() {
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  check(dist::is_initialized() && dist::get_backend() == backend(), "initialized");
  // 7 elements ride the header exchange; 7001 are gathered (2 and 3 ranks); 300001 of float32
  // and float64 go through gloo's ring (Note [Small collectives ride the header] in
  // plugins/gloo/group.hpp)
  for (int64_t n : {int64_t{7}, int64_t{7001}, int64_t{300001}})
    for (kiln::ScalarType dtype : kDtypes) {
      std::string name = std::string(kiln::dtype_name(dtype)) + " x " + std::to_string(n);
      if (n > 10000 && dtype != kiln::kFloat && dtype != kiln::kDouble) continue;  // (time)
      for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::AVG, dist::ReduceOp::MIN,
                                dist::ReduceOp::MAX, dist::ReduceOp::PRODUCT}) {
        if (op == dist::ReduceOp::AVG && !kiln::is_floating_point(dtype)) continue;
        Tensor t = input(rank, n, dtype);
        dist::all_reduce(t, op);
        check(same(t, expected_reduce(size, n, dtype, op), dtype),
              "all_reduce " + std::string(dist::reduce_op_name(op)) + " " + name);
        // a non-contiguous view goes through staging and comes back in place
        Tensor wide = kiln::zeros({n, 2}, kiln::TensorOptions().dtype(dtype));
        Tensor column = wide.select(1, 0);
        column.copy_(input(rank, n, dtype));
        dist::all_reduce(column, op);
        check(same(wide.select(1, 0), expected_reduce(size, n, dtype, op), dtype),
              "all_reduce of a strided view " + name);
      }
      for (int src = 0; src < size; ++src) {
        Tensor t = input(rank, n, dtype);
        dist::broadcast(t, src);
        check(same(t, input(src, n, dtype), dtype),
              "broadcast from " + std::to_string(src) + " " + name);
      }
      std::vector<Tensor> parts;
      dist::all_gather(parts, input(rank, n, dtype));
      check(static_cast<int>(parts.size()) == size, "all_gather list size");
      for (int r = 0; r < size && r < static_cast<int>(parts.size()); ++r) {
        check(same(parts[r], input(r, n, dtype), dtype),
              "all_gather part " + std::to_string(r) + " " + name);
      }
      Tensor gathered = kiln::empty({size * n}, kiln::TensorOptions().dtype(dtype));
      dist::all_gather_into_tensor(gathered, input(rank, n, dtype));
      for (int r = 0; r < size; ++r) {
        check(same(gathered.narrow(0, r * n, n), input(r, n, dtype), dtype),
              "all_gather_into_tensor " + name);
      }
      if (dtype != kiln::kBool) {
        Tensor big = input(rank, size * n, dtype);
        Tensor out = kiln::empty({n}, kiln::TensorOptions().dtype(dtype));
        dist::reduce_scatter_tensor(out, big, dist::ReduceOp::SUM);
        Tensor want =
            expected_reduce(size, size * n, dtype, dist::ReduceOp::SUM).narrow(0, rank * n, n);
        check(same(out, want, dtype), "reduce_scatter_tensor " + name);
      }
    }
  // async: launch several, wait later
  std::vector<Tensor> ts;
  std::vector<dist::WorkPtr> works;
  for (int k = 0; k < 4; ++k) {
    ts.push_back(kiln::full({1000}, static_cast<double>(rank + k),
                            kiln::TensorOptions().dtype(kiln::kFloat)));
    works.push_back(dist::all_reduce(ts.back(), dist::ReduceOp::SUM, nullptr, /*async_op=*/true));
  }
  for (int k = 0; k < 4; ++k) {
    works[k]->wait();
    check(works[k]->is_completed() && works[k]->is_success(), "async work completed");
    double want = size * (size - 1) / 2.0 + size * k;
    check(ts[k].min().item<double>() == want && ts[k].max().item<double>() == want,
          "async all_reduce");
  }
  dist::barrier();
  // point to point around the ring, both directions at once
  const int64_t n = 7;
  Tensor mine = input(rank, n, kiln::kFloat);
  Tensor got = kiln::empty({n}, kiln::TensorOptions().dtype(kiln::kFloat));
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  auto sent = dist::isend(mine, next, nullptr, 3);
  int from = dist::recv(got, prev, nullptr, 3);
  sent->wait();
  check(from == prev && same(got, input(prev, n, kiln::kFloat), kiln::kFloat), "send/recv ring");
  // a sub-group of ranks 0 and the last
  dist::ProcessGroupPtr pair = dist::new_group({0, size - 1});
  if (rank == 0 || rank == size - 1) {
    check(pair->size() == 2 && pair->rank() == (rank == 0 ? 0 : 1), "new_group ranks");
    Tensor t = kiln::full({3}, static_cast<double>(rank), kiln::TensorOptions().dtype(kiln::kLong));
    dist::all_reduce(t, dist::ReduceOp::SUM, pair);
    check(t.sum().item<int64_t>() == 3 * (size - 1), "all_reduce on the sub-group");
  } else {
    check(pair->rank() == -1, "a non-member's group rank is -1");
  }
  dist::barrier();
  dist::destroy_process_group();
  check(!dist::is_initialized(), "destroyed");
}

// Expects `f` to throw kiln::Error whose message contains each of `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts,
                  const std::string& what) {
  try {
    f();
    check(false, what + ": no error");
  } catch (const kiln::Error& e) {
    std::string m = e.what();
    std::cerr << "rank " << rank_text() << ": " << what << ": " << m << "\n";
    for (const std::string& p : parts)
      check(m.find(p) != std::string::npos, what + ": '" + p + "' not in: " + m);
  }
}

// A small MLP; `extra` is a layer the forward does not use.
struct NetImpl : kiln::nn::Module {
  NetImpl(bool with_extra)
      : fc1(register_module("fc1", kiln::nn::Linear(8, 32))),
        fc2(register_module("fc2", kiln::nn::Linear(32, 4))) {
    if (with_extra) extra = register_module("extra", kiln::nn::Linear(4, 4));
  }
  Tensor forward(Tensor x) { return fc2(kiln::tanh(fc1(x))); }
  kiln::nn::Linear fc1, fc2;
  kiln::nn::Linear extra{nullptr};
};
KILN_MODULE(Net);

double max_difference(kiln::nn::Module& a, kiln::nn::Module& b) {
  std::vector<Tensor> pa = a.parameters(), pb = b.parameters();
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
  }
  return worst;
}

// The batch of step s: 64 rows, the same on every rank.
std::pair<Tensor, Tensor> batch(int step) {
  kiln::manual_seed(1000 + step);
  return {kiln::randn({64, 8}), kiln::randn({64, 4})};
}

// One parameter w of 64 elements; loss = sum(w * c), so w's gradient is c exactly.
struct VecImpl : kiln::nn::Module {
  VecImpl() { w = register_parameter("w", kiln::zeros({64})); }
  Tensor forward(Tensor c) { return (w * c).sum(); }
  Tensor w;
};
KILN_MODULE(Vec);

// Rank r's gradient for VecImpl: values with every mantissa bit in use.
Tensor rank_gradient(int rank) {
  return (kiln::arange(64, kiln::TensorOptions().dtype(kiln::kFloat)) + 1) *
         (1.0 / 3 + 0.01 * rank);
}

// The communication hooks (2 ranks): PyTorch's fp16 and bf16 compression round as
// (half(g0) / 2 + half(g1) / 2) in the 16-bit type; a user's hook is called once per bucket, in
// order, with the bucket's buffer and views, and its result becomes the gradients; a hook is
// registered once and before the first backward.
void ddp_hooks() {
  namespace par = kiln::nn::parallel;
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  check(size == 2, "ddp_hooks runs on 2 ranks");
  Tensor g0 = rank_gradient(0), g1 = rank_gradient(1), mine = rank_gradient(rank);
  Tensor average = (g0 + g1) / 2;
  for (auto dtype : {kiln::kHalf, kiln::kBFloat16}) {
    Vec model;
    auto ddp = par::DistributedDataParallel(model);
    if (dtype == kiln::kHalf) {
      ddp->register_comm_hook(dist::ProcessGroupPtr(), par::default_hooks::fp16_compress_hook);
    } else {
      ddp->register_comm_hook(dist::ProcessGroupPtr(), par::default_hooks::bf16_compress_hook);
    }
    ddp->forward(mine).backward();
    Tensor expected = (g0.to(dtype) / 2 + g1.to(dtype) / 2).to(kiln::kFloat);
    std::string name = dtype == kiln::kHalf ? "fp16_compress_hook" : "bf16_compress_hook";
    double d = (model->w.grad() - expected).abs().max().item<double>();
    check(d == 0, name + " rounds as PyTorch's: off by " + std::to_string(d));
    check((expected - average).abs().max().item<double>() > 0,
          name + "'s rounding is visible against the float32 average");
  }
  // a user's hook: SUM instead of AVG, called per bucket
  Net model(false);
  auto ddp =
      par::DistributedDataParallel(model,
                                   par::DistributedDataParallelOptions().bucket_cap_mb(0.0005));
  std::vector<int64_t> sizes = ddp->bucket_sizes();
  std::vector<size_t> calls;
  bool shapes_ok = true;
  ddp->register_comm_hook([&](par::GradBucket& bucket) {
    calls.push_back(bucket.index());
    int64_t n = 0;
    for (size_t k = 0; k < bucket.gradients().size(); ++k) {
      n += bucket.gradients()[k].numel();
      shapes_ok = shapes_ok && bucket.gradients()[k].sizes() == bucket.parameters()[k].sizes();
    }
    shapes_ok = shapes_ok && n == bucket.buffer().numel() &&
                bucket.buffer().numel() == sizes[bucket.index()] &&
                bucket.is_last() == (bucket.index() + 1 == sizes.size());
    auto work = dist::all_reduce(bucket.buffer(), dist::ReduceOp::SUM, nullptr, true);
    return std::make_shared<par::BucketFuture>(work, bucket.buffer());
  });
  expect_error([&] { ddp->register_comm_hook([](par::GradBucket&) { return nullptr; }); },
               {"register_comm_hook", "only be called once"}, "a second hook");
  auto [x, y] = batch(0);
  int64_t per = 64 / size;
  Tensor xs = x.narrow(0, rank * per, per), ys = y.narrow(0, rank * per, per);
  kiln::nn::functional::mse_loss(ddp->forward(xs), ys).backward();
  check(sizes.size() > 1 && calls.size() == sizes.size(), "the hook is called once per bucket");
  for (size_t k = 0; k < calls.size(); ++k) check(calls[k] == k, "buckets in order");
  check(shapes_ok, "the bucket's buffer, gradients and parameters match");
  Tensor local = [&] {  // this rank's own gradient of fc1.weight, without DDP
    Net plain(false);
    kiln::NoGradGuard no_grad;
    auto ps = plain->parameters(), qs = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
    kiln::AutoGradMode on(true);
    kiln::nn::functional::mse_loss(plain(xs), ys).backward();
    return plain->fc1->weight.grad();
  }();
  Tensor sum = local.clone();
  dist::all_reduce(sum, dist::ReduceOp::SUM);
  check((model->fc1->weight.grad() - sum).abs().max().item<double>() < 1e-6,
        "the hook's SUM becomes the gradient");
  Vec late;
  auto too_late = par::DistributedDataParallel(late);
  too_late->forward(mine).backward();
  expect_error(
      [&] {
        too_late->register_comm_hook(dist::ProcessGroupPtr(), par::default_hooks::allreduce_hook);
      },
      {"register_comm_hook", "before the first backward"}, "a hook after backward");
  dist::destroy_process_group();
}

// gradient_as_bucket_view: the same trajectory as one process; after the first backward each
// grad() is a view of its bucket (adjacent parameters of a bucket are adjacent in memory) and
// stays so across steps with zero_grad(false).
void ddp_bucket_view() {
  namespace par = kiln::nn::parallel;
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  kiln::manual_seed(rank);
  Net model(false);
  auto ddp = par::DistributedDataParallel(
      model, par::DistributedDataParallelOptions().gradient_as_bucket_view(true));
  Net reference(false);
  {
    kiln::NoGradGuard no_grad;
    auto ps = reference->parameters(), qs = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
  }
  kiln::optim::SGD opt(ddp->parameters(), kiln::optim::SGDOptions(0.1).momentum(0.9));
  kiln::optim::SGD ref_opt(reference->parameters(), kiln::optim::SGDOptions(0.1).momentum(0.9));
  int64_t per = 64 / size;
  void* bias_ptr = nullptr;
  for (int step = 0; step < 5; ++step) {
    auto [x, y] = batch(step);
    opt.zero_grad(/*set_to_none=*/false);
    kiln::nn::functional::mse_loss(ddp->forward(x.narrow(0, rank * per, per)),
                                   y.narrow(0, rank * per, per))
        .backward();
    const Tensor &wg = model->fc2->weight.grad(), &bg = model->fc2->bias.grad();
    check(static_cast<float*>(wg.data_ptr()) == static_cast<float*>(bg.data_ptr()) + 4,
          "fc2's weight gradient follows its bias gradient in the bucket");
    if (step == 0) bias_ptr = bg.data_ptr();
    check(bg.data_ptr() == bias_ptr, "the gradients stay views of the bucket");
    opt.step();
    ref_opt.zero_grad();
    kiln::nn::functional::mse_loss(reference(x), y).backward();
    ref_opt.step();
    double d = max_difference(*model, *reference);
    check(d < 1e-5, "bucket-view step " + std::to_string(step) + " differs from one process by " +
                        std::to_string(d));
  }
  dist::destroy_process_group();
}

// Checkpoints under DDP: after 3 Adam steps rank 0 saves the model and the optimizer; every rank
// loads them into a fresh model (another seed) and optimizer, and the next 3 steps give exactly
// the parameters of the uninterrupted run.
void ddp_checkpoint() {
  namespace par = kiln::nn::parallel;
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  std::string stem = std::string("/tmp/kiln-ddp-ckpt-") + std::getenv("MASTER_PORT");
  int64_t per = 64 / size;
  auto train = [&](Net& model, par::DistributedDataParallel& ddp, kiln::optim::Adam& opt, int first,
                   int last) {
    for (int step = first; step < last; ++step) {
      auto [x, y] = batch(step);
      opt.zero_grad();
      kiln::nn::functional::mse_loss(ddp->forward(x.narrow(0, rank * per, per)),
                                     y.narrow(0, rank * per, per))
          .backward();
      opt.step();
    }
    (void)model;
  };
  kiln::manual_seed(rank);
  Net model(false);
  auto ddp = par::DistributedDataParallel(model);
  kiln::optim::Adam opt(ddp->parameters(), kiln::optim::AdamOptions(0.01));
  train(model, ddp, opt, 0, 3);
  if (rank == 0) {
    kiln::save(*model, stem + ".model");
    kiln::save(opt, stem + ".optim");
  }
  dist::barrier();
  train(model, ddp, opt, 3, 6);

  kiln::manual_seed(100 + rank);
  Net fresh(false);
  kiln::load(*fresh, stem + ".model");
  auto fresh_ddp = par::DistributedDataParallel(fresh);
  kiln::optim::Adam fresh_opt(fresh_ddp->parameters(), kiln::optim::AdamOptions(0.01));
  kiln::load(fresh_opt, stem + ".optim");
  train(fresh, fresh_ddp, fresh_opt, 3, 6);
  double d = max_difference(*model, *fresh);
  check(d == 0, "training resumed from rank 0's checkpoint differs by " + std::to_string(d));
  dist::barrier();
  if (rank == 0) {
    std::remove((stem + ".model").c_str());
    std::remove((stem + ".optim").c_str());
  }
  dist::destroy_process_group();
}

// ZeroRedundancyOptimizer<Adam> under DDP (2 ranks) follows one process's Adam on the whole
// batch; its state is sharded (each rank steps a part of the parameters); consolidated on rank 0
// it equals the unsharded Adam's state_dict; saved by rank 0 and loaded by every rank into a fresh
// ZeroRedundancyOptimizer, training goes on along the same trajectory.
void zero() {
  namespace par = kiln::nn::parallel;
  using kiln::distributed::optim::ZeroRedundancyOptimizer;
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  kiln::manual_seed(rank);
  Net model(false);
  auto ddp = par::DistributedDataParallel(model);
  Net reference(false);
  {
    kiln::NoGradGuard no_grad;
    auto ps = reference->parameters(), qs = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
  }
  auto adam = kiln::optim::AdamOptions(0.01);
  ZeroRedundancyOptimizer<kiln::optim::Adam> opt(ddp->parameters(), adam);
  kiln::optim::Adam ref_opt(reference->parameters(), adam);
  auto total = static_cast<int64_t>(model->parameters().size());
  int64_t owned = opt.local_optimizer() ? opt.local_optimizer()->size() : 0;
  Tensor count =
      kiln::full({1}, static_cast<double>(owned), kiln::TensorOptions().dtype(kiln::kLong));
  dist::all_reduce(count);
  check(count.item<int64_t>() == total && owned > 0 && owned < total,
        "each parameter has one owner, and each rank owns a part");
  int64_t per = 64 / size;
  auto steps = [&](auto& zero, int first, int last) {
    for (int step = first; step < last; ++step) {
      auto [x, y] = batch(step);
      zero.zero_grad();
      kiln::nn::functional::mse_loss(ddp->forward(x.narrow(0, rank * per, per)),
                                     y.narrow(0, rank * per, per))
          .backward();
      zero.step();
      ref_opt.zero_grad();
      kiln::nn::functional::mse_loss(reference(x), y).backward();
      ref_opt.step();
      double d = max_difference(*model, *reference);
      check(d < 1e-5,
            "ZeRO step " + std::to_string(step) + " differs from Adam by " + std::to_string(d));
    }
  };
  steps(opt, 0, 5);
  opt.consolidate_state_dict(0);
  std::string path = std::string("/tmp/kiln-zero-") + std::getenv("MASTER_PORT") + ".optim";
  if (rank == 0) {
    auto sd = opt.state_dict();
    auto want = ref_opt.state_dict();
    check(sd.state.size() == want.state.size(), "the consolidated state has every parameter");
    double worst = 0;
    for (auto& [index, named] : want.state) {
      for (auto& [name, t] : named) {
        auto it = sd.state.find(index);
        bool has = it != sd.state.end() && it->second.count(name) == 1;
        check(has, "consolidated state has " + std::to_string(index) + "." + name);
        if (has) {
          worst = std::max(worst, (it->second.at(name).to(kiln::kDouble) - t.to(kiln::kDouble))
                                      .abs()
                                      .max()
                                      .item<double>());
        }
      }
    }
    check(worst < 1e-5, "the consolidated state equals Adam's, off by " + std::to_string(worst));
    kiln::optim::Adam plain(model->parameters(), adam);
    plain.load_state_dict(sd);
    kiln::save(plain, path);
  } else {
    expect_error([&] { opt.state_dict(); }, {"state_dict", "consolidate_state_dict"},
                 "state_dict without consolidation");
  }
  dist::barrier();
  kiln::optim::Adam loaded(model->parameters(), adam);
  kiln::load(loaded, path);
  ZeroRedundancyOptimizer<kiln::optim::Adam> fresh(ddp->parameters(), adam);
  fresh.load_state_dict(loaded.state_dict());
  steps(fresh, 5, 8);
  dist::barrier();
  if (rank == 0) std::remove(path.c_str());
  dist::destroy_process_group();
}

// ZeroRedundancyOptimizer is a kiln::optim::Optimizer, over several param groups: with fc1 and
// fc2 as two groups with their own options, driven by a StepLR scheduler through the base class,
// it follows the unsharded optimizer (Adam, then SGD with momentum) step after step, lrs
// included; consolidated on rank 0 its state_dict equals the unsharded one (both groups); a state
// of another group count, parameter count, shape or number of dims, or one rank's shard, is
// refused on every rank naming what differs, and leaves training unchanged; a fresh optimizer
// loading the state goes on along the trajectory; a group added later (add_param_group) is
// sharded and trained too.
// The largest difference between two optimizer states' tensors; 1 when one lacks an entry.
double state_difference(const kiln::optim::OptimizerStateDict& got,
                        const kiln::optim::OptimizerStateDict& want) {
  double worst = got.state.size() == want.state.size() ? 0 : 1;
  for (const auto& [index, named] : want.state) {
    for (const auto& [key, t] : named) {
      auto it = got.state.find(index);
      if (it == got.state.end() || it->second.count(key) == 0) {
        worst = 1;
        continue;
      }
      Tensor d = it->second.at(key).to(kiln::kDouble) - t.to(kiln::kDouble);
      worst = std::max(worst, d.abs().max().item<double>());
    }
  }
  return worst;
}

template <class Opt, class Options>
void zero_groups_with(const Options& first, const Options& second, const std::string& name) {
  namespace par = kiln::nn::parallel;
  using kiln::distributed::optim::ZeroRedundancyOptimizer;
  using kiln::optim::OptimizerParamGroup;
  int rank = dist::get_rank(), size = dist::get_world_size();
  kiln::manual_seed(rank);
  Net model(false);
  auto ddp = par::DistributedDataParallel(model);
  Net reference(false);
  {
    kiln::NoGradGuard no_grad;
    auto ps = reference->parameters(), qs = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
  }
  auto groups = [&](Net& m) {
    return std::vector<OptimizerParamGroup>{
        OptimizerParamGroup(m->fc1->parameters(), std::make_unique<Options>(first)),
        OptimizerParamGroup(m->fc2->parameters(), std::make_unique<Options>(second))};
  };
  ZeroRedundancyOptimizer<Opt> zero(groups(model), first);
  kiln::optim::Optimizer& opt = zero;  // used through the base class
  Opt ref_opt(groups(reference), first);
  kiln::optim::StepLR sched(opt, 2, 0.5), ref_sched(ref_opt, 2, 0.5);
  Tensor extra = kiln::linspace(-1, 1, 40).requires_grad_(true);  // the group added later
  Tensor ref_extra = extra.detach().clone().requires_grad_(true);
  int64_t per = 64 / size;
  // steps [from, to) of o and the reference; the schedulers (if any) step after them
  auto steps = [&](kiln::optim::Optimizer& o, kiln::optim::LRScheduler* s,
                   kiln::optim::LRScheduler* ref_s, int from, int to) {
    for (int step = from; step < to; ++step) {
      auto [x, y] = batch(step);
      o.zero_grad();
      auto loss = kiln::nn::functional::mse_loss(ddp->forward(x.narrow(0, rank * per, per)),
                                                 y.narrow(0, rank * per, per));
      if (extra.grad_fn() == nullptr && o.param_groups().size() == 3)
        loss = loss + (extra * extra).sum() * 0.1;  // the same gradient on every rank
      loss.backward();
      o.step();
      if (s != nullptr) s->step();
      ref_opt.zero_grad();
      auto ref_loss = kiln::nn::functional::mse_loss(reference(x), y);
      if (ref_opt.param_groups().size() == 3)
        ref_loss = ref_loss + (ref_extra * ref_extra).sum() * 0.1;
      ref_loss.backward();
      ref_opt.step();
      if (ref_s != nullptr) ref_s->step();
      double d = max_difference(*model, *reference);
      if (o.param_groups().size() == 3)
        d = std::max(d, (extra - ref_extra).abs().max().item<double>());
      check(d < 1e-5,
            name + ": ZeRO step " + std::to_string(step) + " differs by " + std::to_string(d));
      for (size_t g = 0; g < ref_opt.param_groups().size(); ++g) {
        check(o.param_groups()[g].options().get_lr() ==
                  ref_opt.param_groups()[g].options().get_lr(),
              name + ": the lr of group " + std::to_string(g) + " follows the scheduler");
      }
    }
  };
  steps(opt, &sched, &ref_sched, 0, 5);
  check(opt.param_groups()[1].options().get_lr() < second.lr() / 3,
        name + ": StepLR lowered the lr");
  check(zero.local_optimizer() != nullptr && zero.local_optimizer()->param_groups().size() <= 2,
        name + ": the local optimizer holds this rank's part of the groups");

  zero.consolidate_state_dict(0);
  kiln::optim::OptimizerStateDict want = ref_opt.state_dict();
  if (rank == 0) {
    auto sd = opt.state_dict();  // virtual: the consolidated state
    check(sd.param_groups.size() == 2 &&
              sd.param_groups[1].options == want.param_groups[1].options &&
              sd.param_groups[0].options == want.param_groups[0].options,
          name + ": the consolidated groups and their options");
    double worst = state_difference(sd, want);
    check(worst < 1e-5, name + ": the consolidated state equals the unsharded one, off by " +
                            std::to_string(worst));
  } else {
    expect_error([&] { opt.state_dict(); },
                 {"ZeroRedundancyOptimizer.state_dict", "on this rank (1)",
                  "consolidate_state_dict"},
                 name + ": state_dict on a rank it was not consolidated to");
  }
  // refused states, on every rank alike
  auto fewer_groups = want;
  fewer_groups.param_groups.pop_back();
  expect_error([&] { opt.load_state_dict(fewer_groups); },
               {"ZeroRedundancyOptimizer.load_state_dict",
                "the state has 1 param group(s), this optimizer 2"},
               name + ": a state of one group");
  auto fewer_params = want;
  fewer_params.param_groups[1].params.pop_back();
  expect_error([&] { opt.load_state_dict(fewer_params); },
               {"param group 1 of the state has 1 parameter(s), this optimizer's has 2"},
               name + ": a state with a parameter less");
  std::string key;
  for (auto& [k, t] : want.state.at(0))
    if (k != "step") key = k;
  auto wrong_shape = want;
  wrong_shape.state.at(0)[key] = kiln::zeros({8, 32});  // fc1.weight is 32 x 8
  expect_error([&] { opt.load_state_dict(wrong_shape); },
               {"the state's '" + key + "' of parameter 0 has shape [8, 32]", "[32, 8]"},
               name + ": a state tensor of another shape");
  auto wrong_dims = want;
  wrong_dims.state.at(1)[key] = kiln::zeros({1, 32});  // fc1.bias has 1 dim
  expect_error([&] { opt.load_state_dict(wrong_dims); },
               {"of parameter 1 has shape [1, 32] (2 dims)", "has shape [32] (1 dims)"},
               name + ": a state tensor with another number of dims");
  kiln::optim::OptimizerStateDict shard =
      zero.local_optimizer()->state_dict();  // this rank's part only
  expect_error([&] { opt.load_state_dict(shard); },
               {"ZeroRedundancyOptimizer.load_state_dict", "this optimizer"},
               name + ": one rank's shard");
  steps(opt, &sched, &ref_sched, 5, 6);  // the refusals changed nothing

  // a fresh optimizer loading the unsharded state goes on along the trajectory
  kiln::optim::OptimizerStateDict state = ref_opt.state_dict();
  ZeroRedundancyOptimizer<Opt> fresh(groups(model), first);
  fresh.load_state_dict(state);
  kiln::optim::StepLR fresh_sched(fresh, 2, 0.5);
  fresh_sched.load_state_dict(sched.state_dict());  // resumes the schedule, as PyTorch's
  for (size_t g = 0; g < 2; ++g)
    check(fresh.param_groups()[g].options().get_lr() ==
              ref_opt.param_groups()[g].options().get_lr(),
          name + ": the loaded lrs");
  steps(fresh, &fresh_sched, &ref_sched, 6, 8);

  // a group added later is assigned to ranks and trained
  fresh.add_param_group(OptimizerParamGroup({extra}, std::make_unique<Options>(second)));
  ref_opt.add_param_group(OptimizerParamGroup({ref_extra}, std::make_unique<Options>(second)));
  check(fresh.owner(fresh.size() - 1) >= 0 && fresh.owner(fresh.size() - 1) < size,
        name + ": the added parameter has an owner");
  steps(fresh, nullptr, nullptr, 8, 11);
  dist::barrier();
}

void zero_groups() {
  init();
  zero_groups_with<kiln::optim::Adam>(kiln::optim::AdamOptions(0.01),
                                      kiln::optim::AdamOptions(0.02).weight_decay(0.01), "Adam");
  zero_groups_with<kiln::optim::SGD>(kiln::optim::SGDOptions(0.1).momentum(0.9),
                                     kiln::optim::SGDOptions(0.05).momentum(0.5), "SGD");
  dist::destroy_process_group();
}

// DistributedDataParallel wraps a Sequential (the holder, and a shared_ptr) and follows one
// process's training on the whole batch, with and without gradient_as_bucket_view. With one
// parameter per bucket, a bucket is launched the moment its parameter's gradient is accumulated
// (once the buckets before it are): a post-accumulate-grad hook registered after DDP's sees it
// launched, also with bucket views (Note [Bucket views]).
void ddp_sequential() {
  namespace par = kiln::nn::parallel;
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  int64_t per = 64 / size;
  for (bool as_view : {false, true}) {
    std::string mode = as_view ? "bucket views" : "copies";
    kiln::manual_seed(rank + 7);
    kiln::nn::Sequential seq(kiln::nn::Linear(8, 32), kiln::nn::Tanh(), kiln::nn::Linear(32, 4));
    auto options =
        par::DistributedDataParallelOptions().bucket_cap_mb(0.0005).gradient_as_bucket_view(
            as_view);
    auto ddp = as_view ? par::DistributedDataParallel(seq, options)
                       : par::DistributedDataParallel(seq.ptr(), options);
    check(ddp->module() == seq.ptr(), "module() is the Sequential");
    kiln::nn::Sequential reference(kiln::nn::Linear(8, 32), kiln::nn::Tanh(),
                                   kiln::nn::Linear(32, 4));
    {
      kiln::NoGradGuard no_grad;
      auto ps = reference->parameters(), qs = seq->parameters();
      for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
    }
    std::vector<int64_t> sizes = ddp->bucket_sizes();
    check(sizes == std::vector<int64_t>({4, 128, 32, 256}), mode + ": one parameter per bucket");
    std::vector<size_t> launched;
    ddp->register_comm_hook([&](par::GradBucket& bucket) {
      launched.push_back(bucket.index());
      auto work = dist::all_reduce(bucket.buffer(), dist::ReduceOp::AVG, nullptr, true);
      return std::make_shared<par::BucketFuture>(work, bucket.buffer());
    });
    std::vector<Tensor> params = seq->parameters();  // bucket of params[i]: 3 - i
    std::vector<bool> accumulated(params.size(), false);
    int checked = 0, late = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      kiln::autograd::register_post_accumulate_grad_hook(params[i], [&, i](const Tensor&) {
        accumulated[i] = true;
        bool before_ready = true;  // every parameter of this bucket and the ones before it
        for (size_t j = i; j < params.size(); ++j) before_ready = before_ready && accumulated[j];
        if (!before_ready) return;
        ++checked;
        if (std::find(launched.begin(), launched.end(), 3 - i) == launched.end()) ++late;
      });
    }
    kiln::optim::SGD opt(ddp->parameters(), kiln::optim::SGDOptions(0.1).momentum(0.9));
    kiln::optim::SGD ref_opt(reference->parameters(), kiln::optim::SGDOptions(0.1).momentum(0.9));
    for (int step = 0; step < 4; ++step) {
      auto [x, y] = batch(step);
      opt.zero_grad(/*set_to_none=*/!as_view);
      launched.clear();
      std::fill(accumulated.begin(), accumulated.end(), false);
      kiln::nn::functional::mse_loss(ddp(x.narrow(0, rank * per, per)),
                                     y.narrow(0, rank * per, per))
          .backward();
      check(launched == std::vector<size_t>({0, 1, 2, 3}), mode + ": every bucket, in order");
      opt.step();
      ref_opt.zero_grad();
      kiln::nn::functional::mse_loss(reference(x), y).backward();
      ref_opt.step();
      double d = max_difference(*seq, *reference);
      check(d < 1e-5, "DDP(Sequential) with " + mode + ", step " + std::to_string(step) +
                          " differs from one process by " + std::to_string(d));
    }
    check(checked >= 4 && late == 0,
          mode + ": each bucket launched when its gradient was accumulated (" +
              std::to_string(late) + " of " + std::to_string(checked) + " late)");
    // any-argument forward: Sequential's forward<ReturnType>
    Tensor out = ddp->forward<Tensor>(batch(0).first);
    check(out.sizes() == std::vector<int64_t>({64, 4}), "forward<Tensor> through the Sequential");
  }
  dist::destroy_process_group();
}

// The data side (2 ranks x 2 workers over 6 tar shards of 10 samples, written by rank 0 into
// $KILN_TEST_WORK): the source and DistributedSampler take the group's rank and world size; one
// epoch's keys go to keys.full.<rank>; a loader stopped after 2 batches, its state saved to a file
// and loaded by a fresh loader, reads the same keys in the same order (keys.resumed.<rank>). The
// test checks that the ranks' files hold every sample exactly once.
std::vector<std::string> epoch_keys(kiln::data::DataLoader& loader, int count = -1) {
  std::vector<std::string> keys;
  int n = 0;
  for (kiln::data::Sample& batch : loader) {
    for (const kiln::data::Sample& k : batch.at("__key__").list()) keys.push_back(k.str());
    if (++n == count) break;
  }
  return keys;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path);
  for (const std::string& l : lines) out << l << "\n";
}

void data() {
  namespace data = kiln::data;
  expect_error([] { data::DistributedSampler(10); },
               {"DistributedSampler: num_replicas was not given", "init_process_group"},
               "a DistributedSampler without a group");
  check(data::open("tar:/nonexistent-{0..3}.tar")->options().world_size() == 1,
        "without a group a source is one rank of 1");
  init();
  int rank = dist::get_rank(), world = dist::get_world_size();
  const char* work = std::getenv("KILN_TEST_WORK");
  check(work != nullptr, "KILN_TEST_WORK is set");
  std::string dir = work != nullptr ? work : "/tmp";
  if (rank == 0) {
    data::TarShardWriter writer(dir + "/train-%06d.tar", int64_t{1} << 30, 10);
    for (int i = 0; i < 60; ++i) {
      char key[16];
      std::snprintf(key, sizeof key, "%06d", i);
      writer.write(key, {{"cls", std::to_string(i)}});
    }
    writer.close();
  }
  dist::barrier();
  auto source = [&] {
    return data::open("tar:" + dir + "/train-{000000..000005}.tar",
                      data::SourceOptions().shuffle_shards(true).shuffle(8, 2).seed(3));
  };
  auto src = source();
  check(src->options().rank() == rank && src->options().world_size() == world,
        "the source takes the group's rank and world size");
  data::DistributedSampler sampler(10);
  check(sampler.num_replicas() == world && sampler.rank() == rank,
        "DistributedSampler takes the group's rank and world size");
  auto opts = data::DataLoaderOptions(4).workers(2).seed(1);
  data::DataLoader full(src, opts);
  std::vector<std::string> all = epoch_keys(full);
  write_lines(dir + "/keys.full." + std::to_string(rank), all);

  data::DataLoader first(source(), opts);
  std::vector<std::string> head = epoch_keys(first, 2);
  std::string state_file = dir + "/state." + std::to_string(rank);
  {
    std::ofstream out(state_file);
    out << data::dump_state(first.state_dict());
  }
  std::stringstream text;
  text << std::ifstream(state_file).rdbuf();
  data::DataLoader second(source(), opts);
  second.load_state_dict(data::parse_state(text.str()));
  std::vector<std::string> rest = epoch_keys(second);
  head.insert(head.end(), rest.begin(), rest.end());
  check(head == all, "the resumed epoch reads this rank's samples in the uninterrupted order");
  write_lines(dir + "/keys.resumed." + std::to_string(rank), head);
  // every rank read its share: the counts add up to the dataset
  Tensor n =
      kiln::full({1}, static_cast<double>(all.size()), kiln::TensorOptions().dtype(kiln::kLong));
  dist::all_reduce(n);
  check(n.item<int64_t>() == 60,
        "the ranks' samples add up to 60, got " + std::to_string(n.item<int64_t>()));
  dist::destroy_process_group();
}

// DistributedDataParallel on 2 ranks, 32 rows each, equals one process on all 64 rows, step after
// step; no_sync accumulation over two halves equals it too; unused parameters.
void ddp() {
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  kiln::manual_seed(rank);  // different on each rank: the broadcast from rank 0 must fix that
  Net model(false);
  auto ddp_model = kiln::nn::parallel::DistributedDataParallel(
      model, kiln::nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(0.0005));
  check(ddp_model->bucket_sizes().size() > 1, "several buckets");
  Net reference(false);
  {
    kiln::NoGradGuard no_grad;
    auto ps = reference->parameters(), qs = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) ps[i].copy_(qs[i]);
  }
  kiln::optim::SGD opt(ddp_model->parameters(), kiln::optim::SGDOptions(0.1));
  kiln::optim::SGD ref_opt(reference->parameters(), kiln::optim::SGDOptions(0.1));
  int64_t per = 64 / size;
  for (int step = 0; step < 5; ++step) {
    auto [x, y] = batch(step);
    opt.zero_grad();
    auto loss = kiln::nn::functional::mse_loss(ddp_model->forward(x.narrow(0, rank * per, per)),
                                               y.narrow(0, rank * per, per));
    loss.backward();
    opt.step();
    ref_opt.zero_grad();
    kiln::nn::functional::mse_loss(reference(x), y).backward();
    ref_opt.step();
    double d = max_difference(*model, *reference);
    check(d < 1e-5,
          "DDP step " + std::to_string(step) + " differs from one process by " + std::to_string(d));
  }
  // no_sync: two halves of this rank's rows, each loss halved, equal the large batch
  for (int step = 5; step < 8; ++step) {
    auto [x, y] = batch(step);
    opt.zero_grad();
    int64_t half = per / 2;
    {
      auto guard = ddp_model->no_sync();
      auto l = kiln::nn::functional::mse_loss(ddp_model->forward(x.narrow(0, rank * per, half)),
                                              y.narrow(0, rank * per, half));
      (l / 2).backward();
    }
    auto l =
        kiln::nn::functional::mse_loss(ddp_model->forward(x.narrow(0, rank * per + half, half)),
                                       y.narrow(0, rank * per + half, half));
    (l / 2).backward();
    opt.step();
    ref_opt.zero_grad();
    kiln::nn::functional::mse_loss(reference(x), y).backward();
    ref_opt.step();
    double d = max_difference(*model, *reference);
    check(d < 1e-5, "no_sync step " + std::to_string(step) + " differs by " + std::to_string(d));
  }
  // a parameter the forward does not use: an error without find_unused_parameters ...
  Net with_extra(true);
  auto strict = kiln::nn::parallel::DistributedDataParallel(with_extra);
  const std::pair<Tensor, Tensor> data = batch(0);  // a pair, not a binding: clang 14 cannot
  const Tensor &x = data.first, &y = data.second;   // capture structured bindings in a lambda
  expect_error([&] { kiln::nn::functional::mse_loss(strict->forward(x), y).backward(); },
               {"DistributedDataParallel", "module.extra.weight", "find_unused_parameters"},
               "an unused parameter");
  // ... and with it the used gradients are averaged, the unused one stays undefined
  Net loose_model(true);
  auto loose = kiln::nn::parallel::DistributedDataParallel(
      loose_model,
      kiln::nn::parallel::DistributedDataParallelOptions().find_unused_parameters(true));
  for (int k = 0; k < 2; ++k) {
    for (auto& p : loose->parameters()) p.mutable_grad() = Tensor();
    kiln::nn::functional::mse_loss(loose->forward(x.narrow(0, rank * per, per)),
                                   y.narrow(0, rank * per, per))
        .backward();
    check(!loose_model->extra->weight.grad().defined(), "an unused parameter keeps no gradient");
    Tensor g = loose_model->fc1->weight.grad().clone();
    std::vector<Tensor> all;
    dist::all_gather(all, g);
    check((all[0] - all[size - 1]).abs().max().item<double>() == 0,
          "gradients equal on every rank");
  }
  dist::destroy_process_group();
}

// autocast + GradScaler under DDP: an inf on rank 1 alone reaches every rank through the averaged
// gradients, so every rank skips the step and backs off the scale.
void ddp_amp() {
  init();
  int rank = dist::get_rank(), size = dist::get_world_size();
  kiln::manual_seed(rank);
  Net model(false);
  auto ddp_model = kiln::nn::parallel::DistributedDataParallel(model);
  kiln::optim::SGD opt(ddp_model->parameters(), kiln::optim::SGDOptions(0.1));
  kiln::amp::GradScaler scaler;
  int64_t per = 64 / size;
  for (int step = 0; step < 3; ++step) {
    auto [x, y] = batch(step);
    opt.zero_grad();
    Tensor loss;
    {
      kiln::amp::autocast guard("cpu");
      loss = kiln::nn::functional::mse_loss(ddp_model->forward(x.narrow(0, rank * per, per)),
                                            y.narrow(0, rank * per, per).to(kiln::kBFloat16));
    }
    if (step == 1 && rank == 1) loss = loss * std::numeric_limits<float>::infinity();
    scaler.scale(loss).backward();
    Tensor before = model->fc1->weight.clone();
    double scale = scaler.get_scale();
    scaler.step(opt);
    scaler.update();
    bool moved = (model->fc1->weight - before).abs().max().item<double>() > 0;
    check(moved == (step != 1),
          "step " + std::to_string(step) + (step == 1 ? " skipped" : " taken") + " on every rank");
    check((scaler.get_scale() < scale) == (step == 1), "the scale backs off only after the inf");
  }
  dist::destroy_process_group();
}

// Rank 1 dies before the all_reduce: the others fail within the timeout, naming it.
// Rank 2 calls late, after rank 0 has seen the death and left: rank 0, which serves the store,
// stays until the others have left, so rank 2 still names rank 1 (Note [The store outlives the
// failure]).
void rank_dies() {
  init();
  Tensor t = kiln::ones({100});
  dist::all_reduce(t);
  if (dist::get_rank() == 1) _exit(7);
  if (dist::get_rank() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  expect_error([&] { dist::all_reduce(t); }, {"all_reduce", "group 'default'", "rank 1 has died"},
               "a dead rank");
}

// 4 ranks: rank 1 dies; rank 2 sees it, then dies too (no goodbye); rank 3 calls after both:
// it names rank 1, the cause, not rank 2, a follower (Note [Naming the rank that died]).
void rank_dies_then_a_follower() {
  init();
  Tensor t = kiln::ones({100});
  dist::all_reduce(t);
  int rank = dist::get_rank();
  if (rank == 1) _exit(7);
  // after rank 2 has failed (the timeout at most, and the diagnosis's second) and died
  if (rank == 3) std::this_thread::sleep_for(test_timeout() + std::chrono::milliseconds(1500));
  expect_error([&] { dist::all_reduce(t); }, {"all_reduce", "group 'default'", "rank 1 has died"},
               "a dead rank");
  if (rank == 2) _exit(g_failures == 0 ? 0 : 1);  // without the goodbye: dead to the store
}

// Rank 1 stays away (alive) longer than the timeout: the others name it.
void rank_stalls() {
  init();
  if (dist::get_rank() == 1) {
    std::this_thread::sleep_for(test_timeout() * 2);
    _exit(0);
  }
  Tensor t = kiln::ones({100});
  expect_error([&] { dist::all_reduce(t); }, {"all_reduce", "group 'default'", "rank 1"},
               "a stalled rank");
  _exit(g_failures == 0 ? 0 : 1);  // rank 1 still sleeps: leave without the goodbye
}

// Sizes and dtypes that differ across ranks: an error on every rank, naming the odd rank.
void mismatch() {
  init();
  int rank = dist::get_rank();
  Tensor t = kiln::ones({rank == 1 ? 5 : 4});
  expect_error([&] { dist::all_reduce(t); },
               {"all_reduce", "rank 1 called all_reduce with 5 elements"}, "sizes differ");
  Tensor u = kiln::ones({4}, kiln::TensorOptions().dtype(rank == 1 ? kiln::kDouble : kiln::kFloat));
  expect_error([&] { dist::all_reduce(u); }, {"all_reduce", "of float64"}, "dtypes differ");
  // a mismatch is the caller's error (ValueError), with no search for a lost rank
  try {
    Tensor w = kiln::ones({rank == 1 ? 3 : 2});
    dist::all_reduce(w);
    check(false, "sizes differ again: no error");
  } catch (const kiln::ValueError& e) {
    check(std::string(e.what()).find("did not answer") == std::string::npos,
          std::string("a mismatch blames no rank as lost: ") + e.what());
  }
  // the group still works afterwards
  Tensor v = kiln::ones({4});
  dist::all_reduce(v);
  check(v.sum().item<float>() == 4.f * dist::get_world_size(), "the group works after a mismatch");
  // point to point with a size the receiver does not expect
  if (rank == 0) dist::send(kiln::ones({6}), 1);
  if (rank == 1) {
    Tensor r = kiln::empty({4});
    expect_error([&] { dist::recv(r, 0); }, {"recv", "rank 0 sent 6 elements of float32"},
                 "recv size differs");
  }
  dist::barrier();
  dist::destroy_process_group();
}

// init_process_group in a job whose WORLD_SIZE is larger than the ranks started.
void never_joins() {
  expect_error(init, {"init_process_group", "joined the group", "rank 2"}, "a rank never joins");
}

// Bad init arguments, each a ValueError naming what is wrong (one process, no rendezvous).
void bad_init() {
  auto with = [](const char* var, const char* value, const std::vector<std::string>& parts) {
    std::map<std::string, std::string> saved;
    for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"}) {
      saved[v] = std::getenv(v) ? std::getenv(v) : "";
    }
    if (value) setenv(var, value, 1);
    else unsetenv(var);
    expect_error(init, parts, std::string("env ") + var);
    for (auto& [k, v] : saved) setenv(k.c_str(), v.c_str(), 1);
  };
  with("MASTER_ADDR", nullptr, {"MASTER_ADDR", "not set"});
  with("MASTER_PORT", nullptr, {"MASTER_PORT", "not set"});
  with("MASTER_PORT", "http", {"MASTER_PORT='http'", "port number"});
  with("RANK", "one", {"RANK='one'", "not an integer"});
  with("WORLD_SIZE", nullptr, {"WORLD_SIZE", "not set"});
  with("RANK", "4", {"rank 4 is not in [0, world_size 1)"});
  expect_error(
      [] { dist::init_process_group(dist::InitProcessGroupOptions().init_method("udp://x")); },
      {"init_method 'udp://x'", "env://"}, "unknown init_method");
  expect_error(
      [] {
        dist::init_process_group(dist::InitProcessGroupOptions().init_method("tcp://localhost"));
      },
      {"has no port"}, "tcp without a port");
  expect_error(
      [] {
        dist::init_process_group(dist::InitProcessGroupOptions().init_method("file:///tmp/x"));
      },
      {"world_size -1"}, "file without world_size");
  expect_error(
      [] { dist::init_process_group(dist::InitProcessGroupOptions().backend("carrier-pigeon")); },
      {"no communication backend 'carrier-pigeon'", "gloo"}, "unknown backend");
  expect_error([] { dist::get_rank(); }, {"get_rank", "init_process_group"}, "not initialized");
  // a world of one through a file store, and every collective on it
  std::string path = "/tmp/kiln-dist-" + std::to_string(::getpid());
  dist::init_process_group(dist::InitProcessGroupOptions()
                               .init_method("file://" + path)
                               .rank(0)
                               .world_size(1)
                               .timeout(test_timeout()));
  Tensor t = kiln::arange(5);
  dist::all_reduce(t);
  check(t.sum().item<int64_t>() == 10, "world of one");
  expect_error([] { dist::init_process_group(); }, {"already initialized"}, "twice");
  Tensor i = kiln::ones({2}, kiln::TensorOptions().dtype(kiln::kLong));
  expect_error([&] { dist::all_reduce(i, dist::ReduceOp::AVG); },
               {"AVG", "floating-point", "int64"}, "AVG on integers");
  expect_error([&] { dist::broadcast(i, 3); }, {"broadcast", "rank 3"},
               "broadcast from a non-member");
  dist::destroy_process_group();
  check(access(path.c_str(), F_OK) != 0, "the file store's file is removed");
  // a file that is not a file store: a record with a 4 GiB key
  {
    std::ofstream bad(path, std::ios::binary);
    bad << std::string("\xff\xff\xff\xff", 4) << "junk";
  }
  expect_error(
      [&] {
        dist::init_process_group(
            dist::InitProcessGroupOptions().init_method("file://" + path).rank(0).world_size(1));
      },
      {"the file store", "is corrupted", "the record at byte 0 has a key length of 4294967295"},
      "a corrupted file store");
  std::remove(path.c_str());
}

// Rank 0 cannot serve the store on a port that is taken: KILN_TEST_BUSY_PORT is held by the test.
void port_in_use() {
  expect_error(init, {"port", "Address already in use", "MASTER_PORT"}, "port in use");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: dist_worker SCENARIO\n";
    return 2;
  }
  std::map<std::string, std::function<void()>> scenarios = {
      {"collectives", collectives},
      {"rank_dies", rank_dies},
      {"rank_dies_then_a_follower", rank_dies_then_a_follower},
      {"rank_stalls", rank_stalls},
      {"mismatch", mismatch},
      {"never_joins", never_joins},
      {"bad_init", bad_init},
      {"port_in_use", port_in_use},
      {"data", data},
      {"ddp", ddp},
      {"ddp_amp", ddp_amp},
      {"ddp_hooks", ddp_hooks},
      {"ddp_bucket_view", ddp_bucket_view},
      {"ddp_checkpoint", ddp_checkpoint},
      {"zero", zero},
      {"zero_groups", zero_groups},
      {"ddp_sequential", ddp_sequential},
  };
  auto it = scenarios.find(argv[1]);
  if (it == scenarios.end()) {
    std::cerr << "dist_worker: unknown scenario " << argv[1] << "\n";
    return 2;
  }
  try {
    it->second();
  } catch (const std::exception& e) {
    std::cerr << "rank " << rank_text() << ": unexpected: " << e.what() << "\n";
    return 2;
  }
  return g_failures == 0 ? 0 : 1;
}
