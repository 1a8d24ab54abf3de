// "Effective PyTorch"'s ImageDirectoryDataset in kiln: a folder of image files read through the
// "dir" source, which groups files by key ("cat/0001.npy" and "cat/0001.cls" make one sample) and
// cuts the folder into shards so that the DataLoader's 8 workers share it.
//
//   kiln-directory-dataset [FOLDER]   writes 100 images there (a temporary folder by default).
#include <kiln/data/data.h>
#include <kiln/kiln.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace data = kiln::data;

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path dir = argc > 1 ? fs::path(argv[1])
                          : fs::temp_directory_path() /
                                ("kiln_directory_dataset_" + std::to_string(getpid()));
  try {
    // 100 images [24, 24, 3] as .npy files, with their class in a .cls file beside.
    kiln::manual_seed(0);
    for (int i = 0; i < 100; ++i) {
      fs::path sub = dir / (i % 2 ? "cat" : "dog");
      fs::create_directories(sub);
      char key[16];
      std::snprintf(key, sizeof key, "%04d", i);
      std::ofstream(sub / (std::string(key) + ".npy"), std::ios::binary)
          << data::encode_npy(kiln::randint(0, 256, {24, 24, 3}, kiln::kByte));
      std::ofstream(sub / (std::string(key) + ".cls")) << i % 2;
    }
    // The article: DataLoader(ImageDirectoryDataset("/data/imagenet/*.jpg"), num_workers=8).
    auto images = data::open("dir:" + dir.string() + "?pattern=*.*&shard_size=10");
    data::DataLoader loader(images, data::DataLoaderOptions(16).workers(8));
    int64_t total = 0, cats = 0;
    for (data::Sample& batch : loader) {
      total += batch.at("npy").tensor().size(0);  // [16, 24, 24, 3] uint8
      cats += batch.at("cls").tensor().sum().item<int64_t>();
    }
    std::cout << "8 workers read " << total << " images from " << images->shards().size()
              << " shards of " << dir.string() << " (" << cats << " cats)\n";
    std::cout << "each image exactly once: " << (total == 100 && cats == 50 ? "yes" : "no") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (argc <= 1) fs::remove_all(dir);
  return 0;
}
