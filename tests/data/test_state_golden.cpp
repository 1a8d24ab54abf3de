// DataLoader states saved by an earlier kiln still load and resume, and today's state_dict()
// writes them byte for byte as it did: tests/golden/dataloader_states.txt holds dump_state()
// lines written at commit 2918a82, before the state became a typed struct. To write the file
// again (only when the format changes on purpose, with a new "version"), run
//   KILN_WRITE_STATE_GOLDEN=<file> test_data --run_test=state_golden
#include "data_test.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

using namespace kiln::data;
using data_test::TempDir;

namespace {

using Ids = std::vector<std::string>;
using MakeLoader = std::function<std::unique_ptr<DataLoader>()>;

// The samples of a batch: its "__key__" strings, or its "i" values.
void append_ids(const Sample& batch, Ids& out) {
  if (batch.contains("__key__")) {
    data_test::collect_keys(batch, out);
    return;
  }
  for (int64_t v : data_test::ints(batch.at("i").tensor())) out.push_back(std::to_string(v));
}

// The samples of the next `count` batches of `loader` (-1: to the end of the epoch).
Ids take(DataLoader& loader, int count = -1) {
  Ids out;
  int n = 0;
  for (Sample& b : loader) {
    append_ids(b, out);
    if (++n == count) break;
  }
  return out;
}

// A loader made the same way each time, and how many batches it reads before its state is taken
// (-1: a whole epoch, so the state is between epochs).
struct Case {
  std::string name;
  MakeLoader make;
  int batches;
};

std::string state_after(const Case& c) {
  std::unique_ptr<DataLoader> loader = c.make();
  take(*loader, c.batches);
  return dump_state(loader->state_dict());
}

// name -> state text, from the golden file ("name<TAB>text" lines; '#' starts a comment).
std::map<std::string, std::string> read_golden() {
  std::ifstream in(std::string(KILN_GOLDEN_DIR) + "/dataloader_states.txt");
  BOOST_REQUIRE_MESSAGE(in, "cannot open " << KILN_GOLDEN_DIR << "/dataloader_states.txt");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    BOOST_REQUIRE(tab != std::string::npos);
    out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

// The samples the uninterrupted run delivers after the first `batches` (the next epoch when
// the state was taken between epochs).
Ids rest_of_run(const Case& c) {
  std::unique_ptr<DataLoader> loader = c.make();
  if (c.batches < 0) {
    take(*loader);
    return take(*loader);
  }
  Ids all = take(*loader);
  Ids head = take(*c.make(), c.batches);
  return Ids(all.begin() + static_cast<std::ptrdiff_t>(head.size()), all.end());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(state_golden)

BOOST_AUTO_TEST_CASE(states_saved_by_an_earlier_kiln_load_and_resume) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 5, 13);
  auto shards = [url] { return open(url, SourceOptions().shuffle_shards(true).shuffle(20, 5)); };
  std::vector<Case> cases = {
      {"map_shuffled_workers",
       [] {
         return std::make_unique<DataLoader>(data_test::numbers(50),
                                             DataLoaderOptions(4).shuffle(true).seed(7).workers(2));
       },
       5},
      {"map_between_epochs",
       [] {
         return std::make_unique<DataLoader>(data_test::numbers(10),
                                             DataLoaderOptions(3).shuffle(true).seed(4));
       },
       -1},
      {"map_distributed",
       [] {
         auto sampler = std::make_shared<DistributedSampler>(64, 2, 1, true, 5);
         return std::make_unique<DataLoader>(data_test::numbers(64),
                                             DataLoaderOptions(4).sampler(sampler).seed(1));
       },
       3},
      {"iterable_workers",
       [] {
         return std::make_unique<DataLoader>(std::make_shared<data_test::Strided40>(),
                                             DataLoaderOptions(3).workers(2).seed(3));
       },
       4},
      {"tar_workers",
       [shards] {
         return std::make_unique<DataLoader>(shards(), DataLoaderOptions(4).workers(3).seed(21));
       },
       4},
  };
  const char* write_to = std::getenv("KILN_WRITE_STATE_GOLDEN");
  if (write_to != nullptr) {
    std::ofstream out(write_to);
    out << "# DataLoader states as dump_state() wrote them; see tests/data/test_state_golden.cpp\n";
    for (const Case& c : cases) out << c.name << '\t' << state_after(c) << '\n';
    return;
  }
  std::map<std::string, std::string> golden = read_golden();
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      BOOST_REQUIRE(golden.count(c.name) == 1);
      const std::string& text = golden.at(c.name);
      BOOST_TEST(state_after(c) == text);  // the writer's format is unchanged
      std::unique_ptr<DataLoader> resumed = c.make();
      resumed->load_state_dict(parse_state(text));
      Sample loaded = resumed->state_dict();  // loaded, not started yet
      if (loaded.at("in_epoch").to_bool()) {
        BOOST_TEST(dump_state(loaded) == text);
      } else {  // between epochs only the epoch is kept
        BOOST_TEST(loaded.at("epoch").to_int() == parse_state(text).at("epoch").to_int());
      }
      BOOST_TEST(take(*resumed) == rest_of_run(c));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_merged_state_saved_by_an_earlier_kiln_resumes_on_other_ranks) {
  TempDir dir;
  std::string url = "tar:" + data_test::write_shards(dir, 6, 10);
  auto source = [&](int rank, int world) {
    return open(url, SourceOptions().rank(rank).world_size(world).shuffle(8, 2).seed(4));
  };
  Ids seen;
  std::vector<Sample> states;
  for (int rank = 0; rank < 2; ++rank) {
    DataLoader loader(source(rank, 2), DataLoaderOptions(4).workers(2).seed(1));
    Ids head = take(loader, 3);
    seen.insert(seen.end(), head.begin(), head.end());
    states.push_back(loader.state_dict());
  }
  std::string merged = dump_state(merge_states(states));
  if (const char* write_to = std::getenv("KILN_WRITE_STATE_GOLDEN")) {
    std::ofstream(write_to, std::ios::app) << "tar_merged\t" << merged << '\n';
    return;
  }
  std::string text = read_golden().at("tar_merged");
  BOOST_TEST(merged == text);
  for (int rank = 0; rank < 3; ++rank) {
    DataLoader loader(source(rank, 3), DataLoaderOptions(4).workers(1).seed(1));
    loader.load_state_dict(parse_state(text));
    Ids rest = take(loader);
    seen.insert(seen.end(), rest.begin(), rest.end());
  }
  BOOST_TEST(seen.size() == 60u);
  BOOST_TEST(data_test::count(seen).size() == 60u);  // each sample exactly once
}

BOOST_AUTO_TEST_SUITE_END()
