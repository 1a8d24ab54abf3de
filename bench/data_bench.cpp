// Data-loading benchmark, beside PyTorch in the same run: the workload PyTorch measured for the
// issue, 8 tar shards of 10,000 samples (a 3 KB .bin and a .cls each), every sample decoded to
// a uint8 tensor and a label and batched to [256, 3072] and [256].
//
//   kiln-data-bench [--dir DIR] [--epochs N] [--no-torch]
//
// Prints, for 0, 1 and 2 workers, the best epoch's samples/s and GB/s of shard bytes, the
// speed of reading the same files with read() (what `cat` does), and bench/data_bench.py's
// figures for PyTorch's DataLoader (0 and 2 workers) when python3 with torch is there.
#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace data = kiln::data;

namespace {

constexpr int kShards = 8, kPerShard = 10000, kBin = 3072, kBatch = 256;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> make_shards(const fs::path& dir) {
  std::vector<std::string> files;
  for (int s = 0; s < kShards; ++s) {
    char name[32];
    std::snprintf(name, sizeof name, "bench-%02d.tar", s);
    files.push_back((dir / name).string());
  }
  bool present = true;
  for (const std::string& f : files) present &= fs::exists(f);
  if (present) return files;
  fs::create_directories(dir);
  std::cout << "writing " << kShards << " shards of " << kPerShard << " samples to " << dir
            << " ..." << std::endl;
  data::TarShardWriter w((dir / "bench-%02d.tar").string(), int64_t{1} << 40, kPerShard);
  std::string bin(kBin, '\0');
  for (int i = 0; i < kShards * kPerShard; ++i) {
    for (int j = 0; j < kBin; ++j) {
      bin[static_cast<size_t>(j)] = static_cast<char>((i * 31 + j) & 0xff);
    }
    char key[16];
    std::snprintf(key, sizeof key, "%07d", i);
    w.write(key, {{"bin", bin}, {"cls", std::to_string(i % 1000)}});
  }
  w.close();
  return files;
}

// Seconds to read every file with read() in 1 MiB chunks (the page cache's speed: `cat`).
double read_files(const std::vector<std::string>& files, uint64_t& bytes) {
  std::vector<char> buf(1 << 20);
  bytes = 0;
  double start = now();
  for (const std::string& f : files) {
    int fd = ::open(f.c_str(), O_RDONLY);
    for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) {
      bytes += static_cast<uint64_t>(n);
    }
    ::close(fd);
  }
  return now() - start;
}

struct Result {
  int64_t samples = 0;
  double seconds = 0;
};

Result run_kiln(const std::string& url, int workers, int epochs) {
  auto dataset = data::open(url, data::SourceOptions().meta(false));
  data::DataLoader loader(dataset, data::DataLoaderOptions(kBatch).workers(workers));
  Result best;
  for (int e = 0; e < epochs; ++e) {
    double start = now();
    int64_t samples = 0, checksum = 0;
    for (data::Sample& batch : loader) {
      const kiln::Tensor& images = batch.at("bin").tensor();
      const kiln::Tensor& labels = batch.at("cls").tensor();
      if (images.size(1) != kBin || images.dtype() != kiln::kByte ||
          labels.dtype() != kiln::kLong) {
        throw kiln::Error("unexpected batch");
      }
      checksum += labels.data_ptr<int64_t>()[0];
      samples += images.size(0);
    }
    double elapsed = now() - start;
    if (best.seconds == 0 || elapsed < best.seconds) best = {samples, elapsed};
    (void)checksum;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path() / "kiln_data_bench";
  int epochs = 3;
  bool torch = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--epochs" && i + 1 < argc) {
      epochs = std::stoi(argv[++i]);
    } else if (a == "--no-torch") {
      torch = false;
    } else {
      std::cerr << "usage: kiln-data-bench [--dir DIR] [--epochs N] [--no-torch]\n";
      return 2;
    }
  }
  try {
    std::vector<std::string> files = make_shards(dir);
    uint64_t bytes = 0;
    read_files(files, bytes);  // into the page cache
    double cat = 1e9;
    for (int r = 0; r < 5; ++r) cat = std::min(cat, read_files(files, bytes));
    double gb = static_cast<double>(bytes) / 1e9;
    std::printf("shards: %d x %d samples (%d-byte .bin + .cls), %.2f GB of tar, batch %d\n",
                kShards, kPerShard, kBin, gb, kBatch);
    std::printf("%-34s %12s %10s\n", "", "samples/s", "GB/s");
    std::printf("%-34s %12s %10.2f\n", "read() of the shards (cat)", "-", gb / cat);
    std::string url = "tar:" + (dir / "bench-{00..07}.tar").string();
    std::map<int, double> kiln_rate;
    for (int workers : {0, 1, 2}) {
      Result r = run_kiln(url, workers, epochs);
      double rate = static_cast<double>(r.samples) / r.seconds;
      kiln_rate[workers] = rate;
      std::printf("kiln DataLoader, %d worker%s %13.0f %10.2f\n", workers,
                  workers == 1 ? ", " : "s,", rate, gb / r.seconds);
    }
    std::printf("kiln scaling 0 -> 1 -> 2 workers: 1.00x -> %.2fx -> %.2fx\n",
                kiln_rate[1] / kiln_rate[0], kiln_rate[2] / kiln_rate[0]);
    if (torch) {
      // Debian's PyTorch is for /usr/bin/python3 (a python3 earlier on PATH may lack it).
      const char* env = std::getenv("KILN_PYTHON");
      std::string python = env                              ? env
                           : fs::exists("/usr/bin/python3") ? "/usr/bin/python3"
                                                            : "python3";
      std::string cmd = python + " " KILN_BENCH_DIR "/data_bench.py --dir '" + dir.string() +
                        "' --workers 0,2 --epochs 2 2>&1";
      FILE* p = popen(cmd.c_str(), "r");
      char line[512];
      while (p != nullptr && std::fgets(line, sizeof line, p) != nullptr) {
        int w = 0;
        double rate = 0;
        long samples = 0;
        double seconds = 0;
        if (std::sscanf(line, "torch workers=%d samples=%ld seconds=%lf samples_per_s=%lf", &w,
                        &samples, &seconds, &rate) == 4) {
          std::printf("PyTorch DataLoader, %d worker%s %10.0f %10.2f   (kiln: %.0fx)\n", w,
                      w == 1 ? ", " : "s,", rate, gb / seconds, kiln_rate[w] / rate);
        } else {
          std::printf("  python: %s", line);
        }
      }
      if (p != nullptr) pclose(p);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
