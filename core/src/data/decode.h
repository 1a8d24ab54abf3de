// Decoding a source's fields into samples and batches. Internal to libkiln_core.
//
// A decoder (a plugin's kiln_decode_fn, or a C++ FieldDecoder from the options) writes its value
// through kiln_decode_out. ValueBuilder implements those callbacks: it builds a Sample, and when
// it builds a batch it hands out a slot of the batch's tensor for a top-level tensor value, so an
// image or a byte field is written once, straight into [B, ...] (Note [Decode into the batch]).
// The callbacks never throw across the C boundary: a failure is kept and raised after the
// decoder returns.
#pragma once

#include "registry.h"

#include <kiln/data/sample.h>
#include <kiln/data/source.h>
#include <kiln/sdk/plugin.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::data::detail {

// How one field name decodes, resolved once per name per stream.
struct FieldPlan {
  enum class Kind { Bytes, Text, Skip, Plugin, Function };
  Kind kind = Kind::Bytes;
  const DecoderEntry* decoder = nullptr;   // Plugin
  const FieldDecoder* function = nullptr;  // Function (owned by the options)
};

// Resolves field names to FieldPlans from the options and the registry, with a small cache.
class FieldPlanner {
 public:
  explicit FieldPlanner(const SourceOptions& options) : options_(options) {}
  const FieldPlan& plan(const char* name);

 private:
  FieldPlan resolve(const std::string& name) const;
  const SourceOptions& options_;
  std::vector<std::pair<std::string, FieldPlan>> cache_;
};

// One column of a batch that holds tensors of the same dtype and shape: [capacity, *shape].
struct TensorColumn {
  Tensor buffer;
  ScalarType dtype = kByte;
  DimVector shape;
  bool ragged_ok = false;      // raw bytes of other sizes turn the column into a list
  std::vector<Tensor> ragged;  // entries once it is a list
  // Memory for sample `slot` of this shape and dtype; sets `error` and returns null when it does
  // not fit the column.
  void* slot(int64_t capacity, int64_t slot, ScalarType dtype, IntArrayRef shape,
             std::string& error);
};

// Builds one value from kiln_decode_out calls.
class ValueBuilder {
 public:
  // `column` (may be null) receives a top-level tensor at `slot` of a batch of `capacity`.
  ValueBuilder(TensorColumn* column, int64_t capacity, int64_t slot);
  const kiln_decode_out* out() { return &out_; }
  // The value built; throws kiln::ValueError with the message a callback kept.
  Sample take();
  // Whether the top-level value went into the column.
  bool in_column() const { return in_column_; }
  // The failure kept by a callback ("" if none).
  const std::string& error() const { return error_; }

  // the callbacks' bodies (return 0 / a pointer, or keep an error)
  void* tensor(int32_t dtype, int32_t ndim, const int64_t* sizes);
  int32_t put(Sample v);
  int32_t begin(bool map);
  int32_t key(std::string k);
  int32_t end();

 private:
  kiln_decode_out out_;
  TensorColumn* column_;
  int64_t capacity_, slot_;
  struct Frame {
    Sample value;
    std::string pending_key;
    bool has_key = false;
  };
  std::vector<Frame> stack_;
  Sample top_;
  bool has_top_ = false;
  bool in_column_ = false;
  std::string error_;
};

// Decodes one field's bytes by `plan` into a value (tensors go to `column` when given).
// Throws kiln::Error with the decoder's message.
Sample decode_field(const FieldPlan& plan, const char* name, const void* data, size_t size,
                    TensorColumn* column, int64_t capacity, int64_t slot, bool* in_column);

}  // namespace kiln::data::detail
