// kiln-gpt: a character-level GPT (kiln::models::GPT, nanoGPT's shape) trained end to end.
//
//   kiln-gpt [--quick] [--steps N] [--batch B] [--workers W] [--out DIR] [--fp32]
//
// 1. Writes a corpus: sentences of a small English grammar, made by the program itself from a
//    fixed seed (nothing is downloaded), cut into windows of block_size + 1 characters and
//    packed into tar shards in the WebDataset layout ("<key>.tokens.npy") with TarShardWriter.
// 2. Trains through a DataLoader over the shards (shuffled, worker threads) with AdamW from
//    configure_optimizers, under autocast (bfloat16 on the CPU, float16 with GradScaler on CUDA),
//    showing a progress bar with the loss and tokens per second.
// 3. Samples text from the trained model (temperature 0.8, top_k 10).
// --quick trains a small model for a few seconds (a ctest); --fp32 turns autocast off.
#include <kiln/kiln.h>
#include <kiln/models.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "options.h"
#include "status_line.h"

namespace data = kiln::data;
namespace fs = std::filesystem;
using kiln::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

const char* kProgram = "kiln-gpt";

struct Options {
  bool quick = false, fp32 = false;
  int64_t steps = 600, batch = 16, workers = 2;
  std::string out = "kiln-gpt-out";
};

std::string format(const char* fmt, auto... args) {
  char text[512];
  std::snprintf(text, sizeof text, fmt, args...);
  return text;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Sentences of a small grammar: "the old fox sees a red bird near the river." and the like.
std::string make_corpus(int64_t chars) {
  const std::vector<std::string> det = {"the", "a", "every", "one"};
  const std::vector<std::string> adj = {"old", "red", "quiet", "quick", "small", "dark", "bright"};
  const std::vector<std::string> noun = {"fox",   "bird", "king",   "river", "stone",
                                         "child", "ship", "garden", "wolf",  "lamp"};
  const std::vector<std::string> verb = {"sees", "finds", "follows", "keeps", "hears", "loves"};
  const std::vector<std::string> prep = {"near", "under", "beyond", "beside", "over"};
  std::mt19937 rng(1234);
  auto pick = [&](const std::vector<std::string>& words) {
    return words[std::uniform_int_distribution<size_t>(0, words.size() - 1)(rng)];
  };
  auto phrase = [&] {
    std::string p = pick(det) + " ";
    if (rng() % 2) p += pick(adj) + " ";
    return p + pick(noun);
  };
  std::string text;
  while (static_cast<int64_t>(text.size()) < chars) {
    std::string s = phrase() + " " + pick(verb) + " " + phrase();
    if (rng() % 3 == 0) s += " " + pick(prep) + " " + phrase();
    s[0] = static_cast<char>(std::toupper(s[0]));
    text += s + (rng() % 4 == 0 ? ".\n" : ". ");
  }
  return text;
}

// Packs windows of `window` characters (as int64 token indices, one window every window / 2
// characters) into 4 shards; returns the tar: URL of them.
std::string write_shards(const std::vector<int64_t>& tokens, int64_t window,
                         const fs::path& folder) {
  fs::create_directories(folder);
  const int64_t stride = std::max<int64_t>(1, window / 2);
  const int64_t samples = (static_cast<int64_t>(tokens.size()) - window) / stride + 1;
  const int64_t shards = 4, per_shard = (samples + shards - 1) / shards;
  data::TarShardWriter writer((folder / "text-%04d.tar").string(), int64_t{1} << 30, per_shard);
  for (int64_t i = 0; i < samples; ++i) {
    std::vector<int64_t> piece(tokens.begin() + i * stride, tokens.begin() + i * stride + window);
    Tensor t = kiln::tensor(piece).to(kiln::kLong);
    writer.write(data::Sample::Map{{"__key__", format("%07lld", static_cast<long long>(i))},
                                   {"tokens.npy", t}});
  }
  writer.close();
  std::printf("  wrote %zu shards of %lld windows of %lld characters in %s\n",
              writer.shards().size(), static_cast<long long>(samples),
              static_cast<long long>(window), folder.string().c_str());
  return format("tar:%s/text-{0000..%04zu}.tar", folder.string().c_str(),
                writer.shards().size() - 1);
}

std::string bar(int64_t done, int64_t total, int width) {
  auto filled = static_cast<int>(done * width / std::max<int64_t>(total, 1));
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), '.') + "]";
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      KILN_CHECK_VALUE(i + 1 < argc, kProgram, ": ", arg, " needs a value");
      return argv[++i];
    };
    using example_options::parse_int;
    if (arg == "--quick") {
      o.quick = true;
      o.steps = 120;
      o.batch = 8;
    } else if (arg == "--fp32") {
      o.fp32 = true;
    } else if (arg == "--steps") {
      o.steps = parse_int(kProgram, arg, value(), 1, 1000000, "a number of steps");
    } else if (arg == "--batch") {
      o.batch = parse_int(kProgram, arg, value(), 1, 4096, "a batch size");
    } else if (arg == "--workers") {
      o.workers = parse_int(kProgram, arg, value(), 0, 64, "a number of workers");
    } else if (arg == "--out") {
      o.out = value();
    } else {
      throw kiln::ValueError(kiln::detail::str(kProgram, ": unknown option '", arg, "' (try ",
                                               "--quick, --steps, --batch, --workers, --out, ",
                                               "--fp32)"));
    }
  }
  return o;
}

int run(const Options& o) {
  auto start = Clock::now();
  kiln::Device device = kiln::default_device();
  auto config = o.quick ? kiln::models::GPTConfig().n_layer(2).n_head(2).n_embd(64).block_size(32)
                        : kiln::models::GPTConfig().n_layer(4).n_head(4).n_embd(128).block_size(64);
  config.dropout(0.0).bias(false);

  std::printf("[1/3] corpus\n");
  std::string text = make_corpus(o.quick ? 60000 : 400000);
  std::string chars = text;
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  std::map<char, int64_t> index;
  for (size_t i = 0; i < chars.size(); ++i) index[chars[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> tokens;
  for (char c : text) tokens.push_back(index[c]);
  config.vocab_size(static_cast<int64_t>(chars.size()));
  std::printf("  %zu characters of generated text, a vocabulary of %zu\n", text.size(),
              chars.size());
  std::string url = write_shards(tokens, config.block_size() + 1, fs::path(o.out) / "shards");

  bool mixed = !o.fp32;
  auto dtype = kiln::amp::get_autocast_dtype(device.type());
  std::printf("[2/3] training on %s, %s%s\n", device.str().c_str(), mixed ? "autocast " : "float32",
              mixed ? kiln::dtype_name(dtype) : "");
  kiln::manual_seed(0);
  kiln::models::GPT model(config);
  model->to(device);
  std::printf("  %.2fM parameters\n", static_cast<double>(model->get_num_params()) / 1e6);
  auto optimizer = model->configure_optimizers(0.1, o.quick ? 3e-3 : 1e-3, {0.9, 0.99});
  kiln::amp::GradScaler scaler(kiln::amp::GradScalerOptions().set_enabled(mixed &&
                                                                          dtype == kiln::kHalf));
  auto dataset = data::open(url, data::SourceOptions().shuffle(256, 64));
  data::DataLoader loader(
      dataset, data::DataLoaderOptions(o.batch).workers(o.workers).drop_last(true).seed(0).timeout(
                   std::chrono::seconds(60)));

  StatusLine status;
  const int64_t tokens_per_step = o.batch * config.block_size();
  double first_loss = 0, recent = 0, tokens_per_s = 0;
  int64_t step = 0;
  auto train_start = Clock::now(), last = train_start;
  while (step < o.steps) {
    for (auto it = loader.begin(); it != loader.end() && step < o.steps; ++it) {
      Tensor window = it->at("tokens.npy").tensor();  // [B, block_size + 1]
      KILN_CHECK_TYPE(window.dtype() == kiln::kLong && window.dim() == 2, kProgram, ": ",
                      "tokens.npy came back as ", kiln::dtype_name(window.dtype()), " of shape ",
                      window.sizes(), ", not int64 [B, T]: is the decoders plugin loaded?");
      window = window.to(device);
      Tensor x = window.narrow(1, 0, config.block_size());
      Tensor y = window.narrow(1, 1, config.block_size());
      Tensor loss;
      {
        kiln::amp::autocast region(device.type(), std::nullopt, mixed);
        loss = std::get<1>(model(x, y));
      }
      optimizer->zero_grad();
      scaler.scale(loss).backward();
      scaler.step(*optimizer);
      scaler.update();
      double value = loss.item<double>();
      ++step;
      if (step == 1) first_loss = recent = value;
      recent = 0.9 * recent + 0.1 * value;
      auto now = Clock::now();
      double rate = static_cast<double>(tokens_per_step) / seconds(now - last);
      tokens_per_s = step <= 2 ? rate : 0.9 * tokens_per_s + 0.1 * rate;
      last = now;
      bool milestone = step == 1 || step % std::max<int64_t>(1, o.steps / 10) == 0;
      status.show(format("  %s step %5lld/%lld  loss %.4f  %8.0f tokens/s",
                         bar(step, o.steps, 24).c_str(), static_cast<long long>(step),
                         static_cast<long long>(o.steps), recent, tokens_per_s),
                  milestone);
    }
  }
  double train_s = seconds(Clock::now() - train_start);
  status.done(format("  %lld steps in %.1f s, %.0f tokens/s on average; loss fell from %.3f to "
                     "%.3f: %s",
                     static_cast<long long>(step), train_s,
                     static_cast<double>(step * tokens_per_step) / train_s, first_loss, recent,
                     recent < first_loss - 0.5 ? "yes" : "no"));

  std::printf("[3/3] sample (temperature 0.8, top_k 10)\n");
  model->eval();
  std::string prompt = "The ";
  std::vector<int64_t> prompt_tokens;
  for (char c : prompt) prompt_tokens.push_back(index.at(c));
  Tensor idx = kiln::tensor(prompt_tokens).to(kiln::kLong).view({1, -1}).to(device);
  kiln::manual_seed(42);
  Tensor out = model->generate(idx, o.quick ? 120 : 400, 0.8, 10).to(kiln::kCPU);
  std::string sample;
  for (int64_t i = 0; i < out.size(1); ++i) {
    sample += chars[static_cast<size_t>(out[0][i].item<int64_t>())];
  }
  std::printf("----\n%s\n----\nDone in %.1f s\n", sample.c_str(), seconds(Clock::now() - start));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
