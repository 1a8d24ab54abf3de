// <kiln/kiln.h> is everything a kiln user includes, as libtorch's torch/torch.h: this file
// includes nothing else of kiln and trains a small model with nn, optim, amp and data, and saves
// and loads it with serialize (issue 13, item 20: it did not compile while kiln.h lacked them).
#include <kiln/kiln.h>

#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

BOOST_AUTO_TEST_CASE(kiln_h_alone_is_enough_to_train_save_and_load) {
  if (!kiln::is_available(kiln::kCPU)) {
    BOOST_TEST_MESSAGE("the CPU plugin is not built: nothing to train on (it compiled)");
    return;
  }
  kiln::manual_seed(3);
  kiln::Tensor x = kiln::randn({32, 4});
  kiln::Tensor y = x.sum(1, /*keepdim=*/true);
  auto dataset = std::make_shared<kiln::data::TensorDataset>(std::vector<kiln::Tensor>{x, y});
  kiln::data::DataLoader loader(dataset, kiln::data::DataLoaderOptions().batch_size(8));
  kiln::nn::Linear model(4, 1);
  kiln::optim::SGD optimizer(model->parameters(), kiln::optim::SGDOptions(0.05));
  double first = 0, last = 0;
  for (int epoch = 0; epoch < 20; ++epoch) {
    for (kiln::data::Sample& batch : loader) {
      const kiln::data::Sample::List& fields = batch.list();
      kiln::Tensor loss;
      {
        kiln::amp::autocast region(kiln::kCPU, kiln::kBFloat16, /*enabled=*/epoch % 2 == 0);
        loss =
            kiln::nn::functional::mse_loss(model->forward(fields[0].tensor()), fields[1].tensor());
      }
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      if (epoch == 0 && first == 0) first = loss.item<double>();
      last = loss.item<double>();
    }
  }
  BOOST_TEST(last < first / 4, "loss " << first << " -> " << last);

  std::string path = (std::filesystem::temp_directory_path() /
                      ("kiln_umbrella_" + std::to_string(getpid()) + ".safetensors"))
                         .string();
  kiln::save(*model, path);
  kiln::nn::Linear copy(4, 1);
  kiln::load(*copy, path);
  std::filesystem::remove(path);
  BOOST_TEST(kiln::equal(copy->weight, model->weight));
  BOOST_TEST(kiln::equal(copy->bias, model->bias));
}
