// "Building efficient custom data loaders" of "Effective PyTorch", tar version, in kiln: images
// packed into tar shards, read sequentially by a DataLoader whose workers split the shards, so that
// no sample comes twice (the article's naive IterableDataset sends every sample through every
// worker; that version is shown too, counting its duplicates).
//
//   kiln-tar-dataset [FOLDER]   writes 4 shards of 64 images there (a temporary folder by
//                               default), then reads them with 2 workers.
#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

namespace data = kiln::data;

namespace {

// The article's TarImageDataset without worker splitting: each worker reads the whole archive.
class NaiveTarImageDataset : public data::IterableDataset {
 public:
  explicit NaiveTarImageDataset(std::shared_ptr<data::SourceDataset> tar) : tar_(std::move(tar)) {}
  std::unique_ptr<data::SampleStream> iter(const data::WorkerInfo&) override {
    return tar_->iter(data::WorkerInfo{});  // as if it were the only reader
  }

 private:
  std::shared_ptr<data::SourceDataset> tar_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path dir = argc > 1
                     ? fs::path(argv[1])
                     : fs::temp_directory_path() / ("kiln_tar_dataset_" + std::to_string(getpid()));
  fs::create_directories(dir);
  try {
    // 1. Pack 256 images [32, 32, 3] with a class into shards of 64 (as kiln-shard would).
    kiln::manual_seed(0);
    data::TarShardWriter writer((dir / "images-%04d.tar").string(), int64_t{1} << 30, 64);
    for (int i = 0; i < 256; ++i) {
      kiln::Tensor image = kiln::randint(0, 256, {32, 32, 3}, kiln::kByte);
      char key[16];
      std::snprintf(key, sizeof key, "%06d", i);
      writer.write(data::Sample::Map{{"__key__", key}, {"npy", image}, {"cls", i % 10}});
    }
    writer.close();
    std::cout << "wrote " << writer.shards().size() << " shards to " << dir.string() << "\n";

    // 2. Read them: shards split by worker, a shuffle buffer, decoded straight into batches.
    std::string url = "tar:" + (dir / "images-{0000..0003}.tar").string();
    auto dataset = data::open(url, data::SourceOptions().shuffle(100).seed(0));
    data::DataLoader loader(dataset, data::DataLoaderOptions(32).workers(2));
    std::set<std::string> seen;
    size_t total = 0;
    for (data::Sample& batch : loader) {
      const kiln::Tensor& images = batch.at("npy").tensor();  // [32, 32, 32, 3] uint8
      const kiln::Tensor& labels = batch.at("cls").tensor();  // [32] int64
      if (total == 0) {
        std::cout << "batch: images " << images.sizes() << " " << kiln::dtype_name(images.dtype())
                  << ", labels " << labels.sizes() << " " << kiln::dtype_name(labels.dtype())
                  << "\n";
      }
      for (const data::Sample& k : batch.at("__key__").list()) seen.insert(k.str());
      total += static_cast<size_t>(images.size(0));
    }
    std::cout << "2 workers read " << total << " samples, " << seen.size() << " distinct\n";
    std::cout << "each sample exactly once: " << (total == 256 && seen.size() == 256 ? "yes" : "no")
              << "\n";

    // 3. The article's naive version: duplicates.
    data::DataLoader naive(std::make_shared<NaiveTarImageDataset>(data::open(url)),
                           data::DataLoaderOptions(32).workers(2));
    size_t naive_total = 0;
    for (data::Sample& batch : naive) {
      naive_total += static_cast<size_t>(batch.at("cls").tensor().size(0));
    }
    std::cout << "the article's naive dataset with 2 workers: " << naive_total << " samples, "
              << naive_total - 256 << " duplicates\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (argc <= 1) fs::remove_all(dir);
  return 0;
}
