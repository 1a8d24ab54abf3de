// Saving and loading tensors in the safetensors format, which PyTorch, JAX, NumPy and the Hugging
// Face tools read (https://github.com/huggingface/safetensors):
//
//   8 bytes        N, the header length, unsigned little-endian
//   N bytes        a JSON object: {"__metadata__": {"k": "v", ...},            (optional)
//                                  "<name>": {"dtype": "F32", "shape": [2, 3],
//                                             "data_offsets": [begin, end]}, ...}
//                  padded with spaces so that the data starts 8-byte aligned
//   the rest       the tensors' bytes, row-major and little-endian; offsets are relative to the
//                  start of this buffer, which they cover without holes or overlaps
//
// dtypes: BOOL, U8, I8, I16, I32, I64, F16, BF16, F32, F64.
//
//   kiln::save({{"w", w}, {"b", b}}, "model.safetensors");
//   for (auto& [name, t] : kiln::load("model.safetensors")) ...
//   kiln::save(model, "model.safetensors");      // parameters and buffers by name
//   kiln::load(model, "model.safetensors");
//   kiln::save(optimizer, "optimizer.safetensors");  // optimizer.state_dict()
//
// Saving writes a temporary file in the target's directory, flushes it to disk and renames it
// into place, so a reader never sees a half-written file. Loading checks the whole header and the
// file size before reading data; a truncated or corrupt file raises kiln::Error naming the file
// and the problem.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

namespace nn {
class Module;  // kiln/nn/module.h
}
namespace optim {
class Optimizer;  // kiln/optim/optimizer.h
}

// Named tensors in order, as Module::named_parameters() gives them.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
// The "__metadata__" of a safetensors file: string keys to string values.
using SafetensorsMetadata = std::map<std::string, std::string>;

// Writes `tensors` (copied to the CPU and made contiguous; in this order in the header, their
// data ordered by element size, largest first, so each is aligned) and `metadata` to `path`
// atomically, through a temporary `<path>.tmp-<host>-<pid>-<n>` renamed when complete; the
// temporaries that killed saves to `path` left behind are removed first. Throws for an undefined
// tensor, a duplicate name, the reserved name "__metadata__", or an I/O failure (naming the
// file).
KILN_API void save(const NamedTensors& tensors, const std::string& path,
                   const SafetensorsMetadata& metadata = {});
// As above; the tensors are written in name order.
KILN_API void save(const std::map<std::string, Tensor>& tensors, const std::string& path,
                   const SafetensorsMetadata& metadata = {});
// As above, for a braced list: kiln::save({{"w", w}}, path).
KILN_API void save(std::initializer_list<std::pair<std::string, Tensor>> tensors,
                   const std::string& path, const SafetensorsMetadata& metadata = {});

// The tensors of a safetensors file, on the CPU, in the order of its header.
KILN_API NamedTensors load(const std::string& path);

// A safetensors file's tensors and metadata.
struct SafetensorsContents {
  NamedTensors tensors;
  SafetensorsMetadata metadata;
};
// The tensors (on the CPU, in header order) and the metadata of a safetensors file.
KILN_API SafetensorsContents load_safetensors(const std::string& path);

// Writes module.named_parameters() and module.named_buffers() to `path` (as save above).
KILN_API void save(const nn::Module& module, const std::string& path);
// Copies the tensors of `path` into the module's parameters and buffers of the same names.
// Every name must match both ways and every shape and dtype must agree; otherwise throws naming
// the missing and unexpected keys or the mismatching tensor, and changes nothing.
KILN_API void load(nn::Module& module, const std::string& path);

// Writes optimizer.state_dict() to `path`: state tensors as "state.<param index>.<name>", the
// optimizer's name and each group's options and parameter indices as metadata.
KILN_API void save(const optim::Optimizer& optimizer, const std::string& path);
// Restores a file written by save(optimizer, path) with load_state_dict (same checks). Throws
// when the file holds no optimizer state or the state of another kind of optimizer.
KILN_API void load(optim::Optimizer& optimizer, const std::string& path);

}  // namespace kiln
