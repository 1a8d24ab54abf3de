// "Effective PyTorch"'s batch gather ("Optimizing runtime with TorchScript"): output[i] =
// input[i, index[i]], first as a loop over the batch that stacks one gather per row, then
// vectorized: flatten the first two dimensions, offset each row's indices by i * shape[1], and
// gather once. The article measures the loop about 10% faster under TorchScript (kiln has no
// TorchScript: its loop is already C++) and the vectorized form about 100 times faster; this
// prints both timings and their ratio.
//
//   kiln-batch-gather [--batch B] [--rows N] [--width D] [--picks K] [--repeat R]
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "options.h"

using kiln::Tensor;

// The article's batch_gather: one gather per row, stacked.
Tensor batch_gather(const Tensor& tensor, const Tensor& indices) {
  std::vector<Tensor> output;
  for (int64_t i = 0; i < tensor.size(0); ++i) {
    output.push_back(tensor[i].index_select(0, indices[i]));
  }
  return kiln::stack(output);
}

// The article's batch_gather_vec: one gather over the flattened first two dimensions.
Tensor batch_gather_vec(const Tensor& tensor, const Tensor& indices) {
  std::vector<int64_t> shape = tensor.sizes().vec();
  std::vector<int64_t> flat_shape = {shape[0] * shape[1]};
  flat_shape.insert(flat_shape.end(), shape.begin() + 2, shape.end());
  Tensor flat_first = kiln::reshape(tensor, flat_shape);
  std::vector<int64_t> offset_shape(static_cast<size_t>(indices.dim()), 1);
  offset_shape[0] = shape[0];
  Tensor offset = kiln::reshape(kiln::arange(shape[0], kiln::kLong) * shape[1], offset_shape);
  Tensor flat_indices = (indices + offset).reshape({-1});
  std::vector<int64_t> out_shape = indices.sizes().vec();
  out_shape.insert(out_shape.end(), shape.begin() + 2, shape.end());
  return flat_first.index_select(0, flat_indices).reshape(out_shape);
}

// Median microseconds per call of f over `repeat` timed calls (after two warm-up calls).
template <typename F>
double median_us(int64_t repeat, F f) {
  f();
  f();
  std::vector<double> times;
  for (int64_t r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    auto stop = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int main(int argc, char** argv) {
  int64_t batch = 256, rows = 100, width = 32, picks = 10;
  int64_t repeat = 50;
  try {
    for (int i = 1; i < argc; i += 2) {
      std::string flag = argv[i];
      int64_t* target = flag == "--batch"    ? &batch
                        : flag == "--rows"   ? &rows
                        : flag == "--width"  ? &width
                        : flag == "--picks"  ? &picks
                        : flag == "--repeat" ? &repeat
                                             : nullptr;
      if (target == nullptr) {
        throw kiln::ValueError("kiln-batch-gather: unknown option '" + flag + "'");
      }
      if (i + 1 >= argc) throw kiln::ValueError("kiln-batch-gather: " + flag + " needs a value");
      *target = example_options::parse_int("kiln-batch-gather", flag, argv[i + 1], 1, 1 << 20);
    }
    int64_t elements = 0;
    bool overflow = __builtin_mul_overflow(batch, rows, &elements) ||
                    __builtin_mul_overflow(elements, width, &elements);
    if (overflow || elements > (int64_t{1} << 28)) {
      throw kiln::ValueError(kiln::detail::str("kiln-batch-gather: --batch ", batch, " x --rows ",
                                               rows, " x --width ", width,
                                               " is more than 2^28 values: make one smaller"));
    }
  } catch (const kiln::ValueError& e) {
    std::fprintf(stderr,
                 "%s\nusage: %s [--batch B] [--rows N] [--width D] [--picks K] "
                 "[--repeat R]\n",
                 e.what(), argv[0]);
    return 2;
  }
  kiln::manual_seed(0);
  Tensor tensor = kiln::randn({batch, rows, width});
  Tensor indices = kiln::randint(rows, {batch, picks});

  Tensor looped = batch_gather(tensor, indices);
  Tensor vectorized = batch_gather_vec(tensor, indices);
  std::printf("batch gather of [%lld, %lld, %lld] with indices [%lld, %lld]: output sizes %s\n",
              static_cast<long long>(batch), static_cast<long long>(rows),
              static_cast<long long>(width), static_cast<long long>(batch),
              static_cast<long long>(picks), kiln::detail::str(vectorized.sizes()).c_str());
  // Spot check against the definition: output[i][k] = tensor[i][indices[i][k]].
  bool defined = true;
  for (int64_t i = 0; i < batch; i += std::max<int64_t>(1, batch / 7)) {
    int64_t k = i % picks;
    int64_t row = indices[i][k].item<int64_t>();
    defined = defined && vectorized[i][k].equal(tensor[i][row]);
  }
  bool same = looped.equal(vectorized);
  std::printf("loop and vectorized results equal: %s\n", same && defined ? "yes" : "no");

  double loop_us = median_us(repeat, [&] { batch_gather(tensor, indices); });
  double vec_us = median_us(repeat, [&] { batch_gather_vec(tensor, indices); });
  std::printf("batch_gather (loop over the batch): %.1f us\n", loop_us);
  std::printf("batch_gather_vec (one gather):      %.1f us\n", vec_us);
  std::printf("vectorized is %.1fx faster\n", loop_us / vec_us);
  return same && defined ? 0 : 1;
}
