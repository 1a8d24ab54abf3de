// Decoding fields into samples and batch columns. See decode.h.
//
// Note [Decode into the batch]
// A batch of B samples whose field "jpg" decodes to [H, W, 3] uint8 is one tensor [B, H, W, 3].
// When the first sample's decoder asks for its tensor (kiln_decode_out.tensor), the column
// allocates [B, H, W, 3] and hands out row 0; later samples get rows 1, 2, ..., so each image is
// written once, by its decoder, where the batch needs it. A later tensor of another shape is an
// error, as stacking it would be (PyTorch's "stack expects each tensor to be equal size"),
// except for raw bytes, whose column then becomes a list of tensors (PyTorch collates bytes into
// a list).
#include "decode.h"

#include "../runtime.h"

#include <kiln/error.h>
#include <kiln/ops.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace kiln::data::detail {

using kiln::detail::str;

namespace {

// The bytes of `count` tensors of `sizes` and `type`, or false when that overflows (a decoder's
// sizes come from the bytes it decodes).
bool tensor_bytes(IntArrayRef sizes, ScalarType type, int64_t count, uint64_t& bytes) {
  bytes = element_size(type);
  if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(count), &bytes)) return false;
  for (int64_t s : sizes) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes)) return false;
  }
  return bytes <= static_cast<uint64_t>(INT64_MAX);
}

const char* last_extension(const char* name) {
  const char* dot = std::strrchr(name, '.');
  return dot ? dot + 1 : name;
}

std::string registered_names() {
  std::string out;
  for (const DecoderEntry& d : all_decoders()) out += (out.empty() ? "" : ", ") + d.extension;
  return out.empty() ? "none" : out;
}

// --- the kiln_decode_out callbacks: no exception crosses into the plugin -----------------------

ValueBuilder* self(void* ctx) { return static_cast<ValueBuilder*>(ctx); }

void* cb_tensor(void* ctx, int32_t dtype, int32_t ndim, const int64_t* sizes) {
  return self(ctx)->tensor(dtype, ndim, sizes);
}
int32_t cb_text(void* ctx, const char* data, uint64_t size) {
  if (data == nullptr && size > 0) return self(ctx)->put(Sample());  // reported by put's caller
  return self(ctx)->put(std::string(data ? data : "", static_cast<size_t>(size)));
}
int32_t cb_integer(void* ctx, int64_t v) { return self(ctx)->put(v); }
int32_t cb_real(void* ctx, double v) { return self(ctx)->put(v); }
int32_t cb_boolean(void* ctx, int32_t v) { return self(ctx)->put(v != 0); }
int32_t cb_none(void* ctx) { return self(ctx)->put(Sample()); }
int32_t cb_begin_list(void* ctx) { return self(ctx)->begin(false); }
int32_t cb_begin_map(void* ctx) { return self(ctx)->begin(true); }
int32_t cb_key(void* ctx, const char* data, uint64_t size) {
  return self(ctx)->key(std::string(data ? data : "", static_cast<size_t>(size)));
}
int32_t cb_end(void* ctx) { return self(ctx)->end(); }

}  // namespace

// --- FieldPlanner -----------------------------------------------------------------------------

const FieldPlan& FieldPlanner::plan(const char* name) {
  for (const auto& [n, p] : cache_) {
    if (n == name) return p;
  }
  cache_.emplace_back(name, resolve(name));
  return cache_.back().second;
}

FieldPlan FieldPlanner::resolve(const std::string& name) const {
  FieldPlan p;
  const std::vector<std::string>& keep = options_.fields();
  if (!keep.empty() && std::find(keep.begin(), keep.end(), name) == keep.end()) {
    p.kind = FieldPlan::Kind::Skip;
    return p;
  }
  std::string last = last_extension(name.c_str());
  for (const std::string& n : {name, last}) {
    auto fn = options_.decode_fn().find(n);
    if (fn != options_.decode_fn().end()) {
      p.kind = FieldPlan::Kind::Function;
      p.function = &fn->second;
      return p;
    }
    auto as = options_.decode_as().find(n);
    if (as == options_.decode_as().end()) continue;
    const std::string& how = as->second;
    if (how == "bytes") {
      p.kind = FieldPlan::Kind::Bytes;
    } else if (how == "text") {
      p.kind = FieldPlan::Kind::Text;
    } else if (how == "skip") {
      p.kind = FieldPlan::Kind::Skip;
    } else {
      p.decoder = find_decoder(how);
      KILN_CHECK_VALUE(p.decoder != nullptr, "SourceOptions::decode('", n, "', '", how,
                       "'): no decoder '", how, "' is registered (decoders: ", registered_names(),
                       "; or \"bytes\", \"text\", \"skip\")");
      p.kind = FieldPlan::Kind::Plugin;
    }
    return p;
  }
  if (!options_.decode()) return p;  // bytes
  p.decoder = find_decoder(last);
  if (p.decoder != nullptr) p.kind = FieldPlan::Kind::Plugin;
  return p;
}

// --- TensorColumn -----------------------------------------------------------------------------

void* TensorColumn::slot(int64_t capacity, int64_t slot, ScalarType type, IntArrayRef sizes,
                         std::string& error) {
  if (!buffer.defined()) {
    dtype = type;
    shape = DimVector(sizes);
    DimVector full{capacity};
    for (int64_t s : sizes) full.push_back(s);
    buffer = empty(full, TensorOptions().dtype(type));
  }
  bool fits = type == dtype && sizes.equals(IntArrayRef(shape));
  if (fits && ragged.empty()) {
    return static_cast<char*>(buffer.data_ptr()) +
           static_cast<size_t>(slot) * (buffer.nbytes() / static_cast<size_t>(capacity));
  }
  if (!ragged_ok) {
    error = str("stack expects each tensor to be equal size, but got ", IntArrayRef(shape), " ",
                dtype_name(dtype), " at entry 0 and ", sizes, " ", dtype_name(type), " at entry ",
                slot, " (pass a collate_fn, or make the samples one size)");
    return nullptr;
  }
  if (ragged.empty()) {
    for (int64_t i = 0; i < slot; ++i) ragged.push_back(buffer[i]);
  }
  ragged.resize(static_cast<size_t>(slot));
  ragged.push_back(empty(sizes, TensorOptions().dtype(type)));
  return ragged.back().data_ptr();
}

// --- ValueBuilder -----------------------------------------------------------------------------

ValueBuilder::ValueBuilder(TensorColumn* column, int64_t capacity, int64_t slot)
    : column_(column), capacity_(capacity), slot_(slot) {
  out_ = kiln_decode_out{sizeof(kiln_decode_out),
                         this,
                         cb_tensor,
                         cb_text,
                         cb_integer,
                         cb_real,
                         cb_boolean,
                         cb_none,
                         cb_begin_list,
                         cb_begin_map,
                         cb_key,
                         cb_end};
}

void* ValueBuilder::tensor(int32_t dtype, int32_t ndim, const int64_t* sizes) {
  try {
    if (!error_.empty()) return nullptr;
    if (dtype < 0 || dtype >= kNumScalarTypes || ndim < 0 || ndim > 16 ||
        (ndim > 0 && sizes == nullptr)) {
      error_ =
          str("decoder asked for a tensor of dtype code ", dtype, " with ", ndim, " dimensions");
      return nullptr;
    }
    IntArrayRef shape(sizes, static_cast<size_t>(ndim));
    for (int64_t s : shape) {
      if (s < 0) {
        error_ = str("decoder asked for a tensor of negative size ", shape);
        return nullptr;
      }
    }
    auto type = static_cast<ScalarType>(dtype);
    uint64_t bytes = 0;
    int64_t count = column_ != nullptr && !column_->buffer.defined() ? capacity_ : 1;
    if (!tensor_bytes(shape, type, count, bytes)) {
      error_ = str("decoder asked for a tensor of ", dtype_name(type), " ", shape,
                   count > 1 ? str(" for a batch of ", count) : std::string(),
                   ": its size in bytes overflows (a size field of the data is wrong)");
      return nullptr;
    }
    if (stack_.empty() && !has_top_ && column_ != nullptr) {
      void* p = column_->slot(capacity_, slot_, type, shape, error_);
      if (p == nullptr) return nullptr;
      in_column_ = true;
      has_top_ = true;
      return p;
    }
    Tensor t = empty(shape, TensorOptions().dtype(type));
    void* p = t.data_ptr();
    if (put(std::move(t)) != 0) return nullptr;
    return p;
  } catch (const std::exception& e) {
    error_ = e.what();
    return nullptr;
  }
}

int32_t ValueBuilder::put(Sample v) {
  try {
    if (!error_.empty()) return 1;
    if (stack_.empty()) {
      if (has_top_) {
        error_ = "decoder wrote more than one value";
        return 1;
      }
      top_ = std::move(v);
      has_top_ = true;
      return 0;
    }
    Frame& f = stack_.back();
    if (f.value.is_list()) {
      f.value.list().push_back(std::move(v));
      return 0;
    }
    if (!f.has_key) {
      error_ = "decoder wrote a map value without a key";
      return 1;
    }
    f.value.map()[f.pending_key] = std::move(v);
    f.has_key = false;
    return 0;
  } catch (const std::exception& e) {
    error_ = e.what();
    return 1;
  }
}

int32_t ValueBuilder::begin(bool map) {
  try {
    if (!error_.empty()) return 1;
    if (stack_.size() >= 256) {
      error_ = "decoder nested values deeper than 256";
      return 1;
    }
    Frame f;
    f.value = map ? Sample(Sample::Map()) : Sample(Sample::List());
    stack_.push_back(std::move(f));
    return 0;
  } catch (const std::exception& e) {
    error_ = e.what();
    return 1;
  }
}

int32_t ValueBuilder::key(std::string k) {
  if (!error_.empty()) return 1;
  if (stack_.empty() || !stack_.back().value.is_map() || stack_.back().has_key) {
    error_ = "decoder wrote a key outside a map, or two keys in a row";
    return 1;
  }
  stack_.back().pending_key = std::move(k);
  stack_.back().has_key = true;
  return 0;
}

int32_t ValueBuilder::end() {
  if (!error_.empty()) return 1;
  if (stack_.empty()) {
    error_ = "decoder closed a list or map it did not open";
    return 1;
  }
  Sample v = std::move(stack_.back().value);
  stack_.pop_back();
  return put(std::move(v));
}

Sample ValueBuilder::take() {
  if (error_.empty() && !stack_.empty()) error_ = "decoder left a list or map open";
  if (error_.empty() && !has_top_) error_ = "decoder returned success but wrote no value";
  if (!error_.empty()) throw ValueError(error_);
  return in_column_ ? Sample() : std::move(top_);
}

// --- decode_field -----------------------------------------------------------------------------

Sample decode_field(const FieldPlan& plan, const char* name, const void* data, size_t size,
                    TensorColumn* column, int64_t capacity, int64_t slot, bool* in_column) {
  *in_column = false;
  switch (plan.kind) {
    case FieldPlan::Kind::Skip: return Sample();
    case FieldPlan::Kind::Text: return std::string(static_cast<const char*>(data), size);
    case FieldPlan::Kind::Function:
      return (*plan.function)(static_cast<const uint8_t*>(data), size);
    case FieldPlan::Kind::Bytes: {
      ValueBuilder b(column, capacity, slot);
      int64_t n = static_cast<int64_t>(size);
      void* p = b.tensor(static_cast<int32_t>(kByte), 1, &n);
      if (p != nullptr && size > 0) std::memcpy(p, data, size);
      Sample v = b.take();
      *in_column = b.in_column();
      return v;
    }
    case FieldPlan::Kind::Plugin: {
      ValueBuilder b(column, capacity, slot);
      kiln_status status = plan.decoder->fn(data, size, name, b.out(), plan.decoder->user);
      if (status != 0) {
        kiln::detail::PluginError error = kiln::detail::take_plugin_failure();
        if (error.message.empty()) {  // the decoder usually names itself
          error.message = str(plan.decoder->extension,
                              " decoder: ", b.error().empty() ? "failed (no message)" : b.error());
        }
        // bytes a decoder cannot read are a ValueError unless it reports another kind
        if (error.kind == KILN_ERROR_OTHER) error.kind = KILN_ERROR_VALUE;
        kiln::detail::throw_plugin_error("", std::move(error));
      }
      Sample v = b.take();
      *in_column = b.in_column();
      return v;
    }
  }
  return Sample();
}

}  // namespace kiln::data::detail
