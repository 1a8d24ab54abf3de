// Archives: named tensors that a value's save() writes and its load() reads back, as libtorch's
// serialize::OutputArchive / InputArchive, stored in the safetensors format (kiln/serialize.h)
// rather than libtorch's pickled one. kiln::save(value, path_or_stream) and kiln::load(value,
// path_or_stream) take any value with save(OutputArchive&) const / load(InputArchive&) — the
// libtorch-shaped samplers and ChunkDataset:
//
//   kiln::data::samplers::SequentialSampler a(10);
//   std::stringstream stream;
//   kiln::save(a, stream);
//   kiln::load(b, stream);
#pragma once

#include <kiln/export.h>
#include <kiln/serialize.h>
#include <kiln/tensor.h>

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace kiln::serialize {

class KILN_API OutputArchive {
 public:
  // Adds `tensor` under `key`; writing a key again replaces its tensor. (is_buffer is accepted
  // for libtorch's signature; an archive keeps parameters and buffers alike.)
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  // Writes the archive as a safetensors file (atomically, as kiln::save).
  void save_to(const std::string& filename) const;
  // Writes the archive's safetensors bytes to `stream`; throws kiln::Error when it fails.
  void save_to(std::ostream& stream) const;
  const NamedTensors& tensors() const { return tensors_; }

 private:
  NamedTensors tensors_;
};

class KILN_API InputArchive {
 public:
  // Reads a safetensors file (all its checks apply; errors name the file).
  void load_from(const std::string& filename);
  // Reads safetensors bytes from the rest of `stream`.
  void load_from(std::istream& stream);
  // Sets `tensor` to the archive's tensor under `key`; throws kiln::IndexError naming the key
  // and the keys there are when it is absent.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false) const;
  // As read(), returning false instead of throwing when `key` is absent.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false) const;
  std::vector<std::string> keys() const;

 private:
  NamedTensors tensors_;
};

}  // namespace kiln::serialize

namespace kiln {

// Saves `value` through its save(OutputArchive&) to a file name or a std::ostream.
template <class Value, class Target>
auto save(const Value& value, Target&& target)
    -> decltype(value.save(std::declval<serialize::OutputArchive&>()), void()) {
  serialize::OutputArchive archive;
  value.save(archive);
  archive.save_to(std::forward<Target>(target));
}

// Loads `value` through its load(InputArchive&) from a file name or a std::istream.
template <class Value, class Source>
auto load(Value& value, Source&& source)
    -> decltype(value.load(std::declval<serialize::InputArchive&>()), void()) {
  serialize::InputArchive archive;
  archive.load_from(std::forward<Source>(source));
  value.load(archive);
}

}  // namespace kiln
