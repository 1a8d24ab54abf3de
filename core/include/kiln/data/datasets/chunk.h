// ChunkDataset: a stateful dataset read a chunk at a time (a file, or a part of one), as
// libtorch's. A ChunkDataReader reads whole chunks; the ChunkSampler picks which chunks (and in
// which order) an epoch reads, `cross_chunk_shuffle_count` at a time; preloader threads read them
// ahead into a bounded cache of examples, where the ExampleSampler shuffles each loaded group
// and cuts it into batches of `batch_size`. get_batch() hands those batches out, nullopt once
// every chunk was read; reset() starts the next epoch (make_data_loader calls it at begin()).
//
//   auto ds = kiln::data::datasets::make_shared_dataset<
//       kiln::data::datasets::ChunkDataset<MyReader>>(reader, chunk_sampler, example_sampler,
//                                                     ChunkDatasetOptions(/*preloaders=*/2,
//                                                                         /*batch_size=*/32));
//
// The preloaders run on kiln's DataLoader worker pool (kiln/data/detail/job_pool.h). A chunk
// reader's exception is raised by get_batch() as a WorkerException. save()/load() keep the chunk
// sampler's position (chunks already in the cache are read again after a load).
#pragma once

#include <kiln/data/datasets/chunk_buffer.h>
#include <kiln/data/datasets/stateful.h>
#include <kiln/data/detail/job_pool.h>
#include <kiln/data/samplers/random.h>
#include <kiln/error.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>

namespace kiln::data::datasets {

// Reads whole chunks; several preloaders may call read_chunk() at once.
template <typename ExampleType_, typename ChunkType_ = std::vector<ExampleType_>>
class ChunkDataReader {
 public:
  using ChunkType = ChunkType_;
  using BatchType = ChunkType_;
  using ExampleType = ExampleType_;

  virtual ~ChunkDataReader() = default;
  // The examples of chunk `chunk_index`.
  virtual ChunkType read_chunk(size_t chunk_index) = 0;
  // How many chunks there are.
  virtual size_t chunk_count() = 0;
  // Clears any state of the reader (called at each epoch's start).
  virtual void reset() = 0;
};

// How a ChunkDataset loads; the constructor and the setters check every value (kiln::ValueError).
class ChunkDatasetOptions {
 public:
  ChunkDatasetOptions(size_t preloader_count, size_t batch_size, size_t cache_size = 2048,
                      size_t cross_chunk_shuffle_count = 1)
      : preloader_count_(preloader_count),
        batch_size_(batch_size),
        cache_size_(cache_size),
        cross_chunk_shuffle_count_(cross_chunk_shuffle_count) {
    check();
  }

  // Threads reading chunks ahead.
  ChunkDatasetOptions& preloader_count(size_t v) { return set(preloader_count_, v); }
  size_t preloader_count() const { return preloader_count_; }
  // Examples per batch; get_batch() must ask for exactly this many.
  ChunkDatasetOptions& batch_size(size_t v) { return set(batch_size_, v); }
  size_t batch_size() const { return batch_size_; }
  // Examples the cache holds before preloaders wait (at least one batch).
  ChunkDatasetOptions& cache_size(size_t v) { return set(cache_size_, v); }
  size_t cache_size() const { return cache_size_; }
  // Chunks loaded together and shuffled as one (1: no cross-chunk shuffle).
  ChunkDatasetOptions& cross_chunk_shuffle_count(size_t v) {
    return set(cross_chunk_shuffle_count_, v);
  }
  size_t cross_chunk_shuffle_count() const { return cross_chunk_shuffle_count_; }

 private:
  ChunkDatasetOptions& set(size_t& field, size_t v) {
    size_t old = field;
    field = v;
    try {
      check();
    } catch (...) {
      field = old;
      throw;
    }
    return *this;
  }
  void check() const {
    KILN_CHECK_VALUE(preloader_count_ > 0, "Preloader count is 0. At least one preloader needs ",
                     "to be specified.");
    KILN_CHECK_VALUE(batch_size_ > 0, "Batch size is 0. A positive batch size needs to be ",
                     "specified.");
    KILN_CHECK_VALUE(cache_size_ > 0, "Cache size is 0. A positive cache size needs to be ",
                     "specified.");
    KILN_CHECK_VALUE(cache_size_ >= batch_size_, "Cache size is less than batch size. Cache ",
                     "needs to be large enough to hold at least one batch.");
    KILN_CHECK_VALUE(cross_chunk_shuffle_count_ > 0, "cross_chunk_shuffle_count needs to be ",
                     "greater than 0.");
  }

  size_t preloader_count_;
  size_t batch_size_;
  size_t cache_size_;
  size_t cross_chunk_shuffle_count_;
};

template <typename ChunkReader, typename ChunkSampler = samplers::RandomSampler,
          typename ExampleSampler = samplers::RandomSampler>
class ChunkDataset final
    : public StatefulDataset<ChunkDataset<ChunkReader, ChunkSampler, ExampleSampler>,
                             typename ChunkReader::BatchType, size_t> {
 public:
  using BatchType = std::optional<typename ChunkReader::BatchType>;
  using UnwrappedBatchType = typename ChunkReader::BatchType;
  using BatchRequestType = size_t;
  using ChunkSamplerType = ChunkSampler;
  using ExampleSamplerType = ExampleSampler;
  // Applied to each loaded group of chunks before it is shuffled into batches (sorting, say).
  using PreprocessingPolicy = std::function<void(UnwrappedBatchType&)>;

  ChunkDataset(ChunkReader chunk_reader, ChunkSampler chunk_sampler, ExampleSampler example_sampler,
               ChunkDatasetOptions options,
               PreprocessingPolicy preprocessing_policy = PreprocessingPolicy())
      : state_(std::make_shared<State>(std::move(chunk_reader), std::move(chunk_sampler),
                                       std::move(example_sampler), std::move(options),
                                       std::move(preprocessing_policy))) {}

  // Stops the preloaders (waiting at most 5 s for one inside read_chunk).
  ~ChunkDataset() override {
    if (buffer_) buffer_->stop();
    if (preloaders_) preloaders_->shutdown();
  }
  ChunkDataset(const ChunkDataset&) = delete;
  ChunkDataset& operator=(const ChunkDataset&) = delete;

  // The next batch of the epoch, nullopt at its end. `batch_size` must be the options'.
  BatchType get_batch(size_t batch_size) override {
    KILN_CHECK(buffer_ != nullptr, "ChunkDataset: call reset() before get_batch() (Dataset ",
               "needs to call reset() before calling get_batch().)");
    KILN_CHECK_VALUE(batch_size == state_->options.batch_size(),
                     "The requested batch size does not match with the initialized batch size.\n"
                     " The requested batch size is ",
                     batch_size, ", while the dataset is created with batch size equal to ",
                     state_->options.batch_size());
    return buffer_->get_batch();
  }
  BatchType get_batch() { return get_batch(state_->options.batch_size()); }

  // Starts an epoch: stops the last one's preloaders, resets the reader and the chunk sampler
  // (unless load() just restored it) and starts the preloaders on an empty cache.
  void reset() override {
    if (buffer_) buffer_->stop();
    const ChunkDatasetOptions& o = state_->options;
    if (!preloaders_) {
      preloaders_ = std::make_unique<Preloaders>(static_cast<int64_t>(o.preloader_count()),
                                                 std::chrono::seconds(5));
    }
    preloaders_->restart(/*wait_running=*/true);
    {
      std::lock_guard<std::mutex> lock(state_->chunk_mutex);
      if (!state_->load_checkpoint) {
        state_->reader.reset();
        state_->chunk_sampler.reset(state_->reader.chunk_count());
      }
      state_->load_checkpoint = false;
    }
    buffer_ = std::make_shared<Buffer>(o.batch_size(), state_->example_sampler, o.cache_size());
    auto running = std::make_shared<std::atomic<size_t>>(o.preloader_count());
    for (size_t i = 0; i < o.preloader_count(); ++i) {
      preloaders_->submit([state = state_, buffer = buffer_, running](int64_t) {
        preload(*state, *buffer);
        if (running->fetch_sub(1) == 1) buffer->stop();  // the last one ends the epoch
        return std::shared_ptr<void>();
      });
    }
  }

  // Unknown: a chunk dataset is read as a stream.
  std::optional<size_t> size() const override { return std::nullopt; }

  // The chunk sampler (to set a distributed sampler's epoch, say).
  ChunkSamplerType& chunk_sampler() { return state_->chunk_sampler; }

  // Writes / restores the chunk sampler's position; the next reset() resumes from it.
  void save(serialize::OutputArchive& archive) const override {
    std::lock_guard<std::mutex> lock(state_->chunk_mutex);
    state_->chunk_sampler.save(archive);
  }
  void load(serialize::InputArchive& archive) override {
    std::lock_guard<std::mutex> lock(state_->chunk_mutex);
    state_->chunk_sampler.load(archive);
    state_->load_checkpoint = true;
  }

 private:
  using Buffer = detail::ChunkBuffer<UnwrappedBatchType, ExampleSamplerType>;
  using Preloaders = kiln::data::detail::JobPool;

  // What the preloaders share with the dataset (held by each preloader job).
  struct State {
    State(ChunkReader r, ChunkSampler c, ExampleSampler e, ChunkDatasetOptions o,
          PreprocessingPolicy p)
        : reader(std::move(r)),
          chunk_sampler(std::move(c)),
          example_sampler(std::move(e)),
          options(std::move(o)),
          policy(std::move(p)) {}
    ChunkReader reader;
    ChunkSampler chunk_sampler;
    ExampleSampler example_sampler;
    const ChunkDatasetOptions options;
    const PreprocessingPolicy policy;
    mutable std::mutex chunk_mutex;  // chunk_sampler and load_checkpoint
    bool load_checkpoint = false;
  };

  // One preloader: reads groups of chunks into the buffer until the sampler has none left or
  // the buffer is stopped; a reader's exception goes into the buffer for get_batch() to raise.
  static void preload(State& state, Buffer& buffer) {
    while (!buffer.stopped()) {
      std::vector<size_t> chunks;
      {
        std::lock_guard<std::mutex> lock(state.chunk_mutex);
        auto next = state.chunk_sampler.next(state.options.cross_chunk_shuffle_count());
        if (!next) break;
        chunks = std::move(*next);
      }
      try {
        UnwrappedBatchType data;
        for (size_t chunk : chunks) {
          UnwrappedBatchType part = state.reader.read_chunk(chunk);
          data.insert(data.end(), std::make_move_iterator(part.begin()),
                      std::make_move_iterator(part.end()));
        }
        if (state.policy) state.policy(data);
        if (!data.empty()) buffer.add_chunk_data(std::move(data));
      } catch (...) {
        buffer.add_error(std::current_exception());
      }
    }
  }

  std::shared_ptr<State> state_;
  std::shared_ptr<Buffer> buffer_;
  std::unique_ptr<Preloaders> preloaders_;
};

}  // namespace kiln::data::datasets
