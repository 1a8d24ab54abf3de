// Note [Replay plan]: the first replay of a graph without grad (nor profile, nor trace) is a
// planning run. Each node runs its Backend kernel as usual, with a kernel capture on (Note
// [Kernel capture], core/src/kernel_call.h), which lists the plugin kernels it called. A node
// becomes fast when that list explains it completely:
//   - it is not in place and draws no random numbers, and called at least one plugin kernel
//     (not the CPU fallback); no two of its tensor slots share a storage;
//   - every tensor a kernel reads lies in the storage of one of the node's slots (the slot
//     itself, or a view the Backend made of it: a broadcast, a reshape), or in a storage an
//     earlier kernel of the same node wrote (a temporary);
//   - every tensor a kernel writes lies in a storage no slot has (made by the Backend), and
//     every tensor the node returns lies in such a storage;
//   - run again from its argument blocks into storages filled with garbage, it returns the same
//     bytes (a kernel that reads its output, or host code between kernels, would not).
// Since the signature fixes the inputs' shapes, dtypes and devices, and the plan their strides
// (a call with other strides runs unplanned), each kernel sees the same geometry at every call:
// the plan keeps its argument block (descriptors, attributes) and patches only the data pointers,
// from the slots' tensors and the buffers. The shape and dtype rules, the allocation and the
// argument marshalling of the Backend kernels are skipped.
//
// Buffers: each storage a fast node writes is a buffer, live from its node to the last node that
// reads a value in it. A node that is not fast may return a view of its input, so the values it
// returns are taken to hold every buffer its inputs hold (a conservative alias analysis). A buffer
// that holds a value the graph returns is allocated at each call (the caller owns the result, and
// the next call must not write it); the others share storages by interval (a storage serves
// buffers whose lifetimes do not overlap), allocated once and reused at every call while the
// signature holds.
#include "plan.h"

#include "../kernel_call.h"
#include "../runtime.h"
#include "../tensor_internal.h"
#include "passes.h"

#include <kiln/dispatch.h>
#include <kiln/sdk/plugin.h>

#include <algorithm>
#include <cstring>

namespace kiln::jit::detail {

using kiln::detail::CapturedKernel;

namespace {

// Where a kernel's tensor lies: in node slot `slot`'s storage, or in temporary `temp` of the
// node; `delta` is the byte offset from the slot's data pointer or the temporary's base.
struct Ref {
  int slot = -1;
  int temp = -1;
  int64_t delta = 0;
};

struct Step {
  kiln_kernel_fn fn = nullptr;
  void* user = nullptr;
  const OperatorBase* op = nullptr;
  Device device = kCPU;
  std::vector<kiln_tensor> in, out;
  std::vector<Ref> in_ref, out_ref;
  std::vector<std::vector<int64_t>> geometry;  // the descriptors' sizes and strides
  std::vector<kiln_attr> attrs;
  std::vector<std::vector<int64_t>> lists;
  kiln_call call{};
};

struct Temp {
  std::shared_ptr<Storage> sample;  // the planning run's storage (until finish)
  size_t nbytes = 0;
  Device device = kCPU;
  int buffer = -1;  // the plan's buffer (after finish)
};

struct Output {
  int temp = -1;  // -1: the node returned an undefined tensor
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  ScalarType dtype = kFloat;
};

const char* as_bytes(const void* p) { return static_cast<const char*>(p); }

// A node with more slots or temporaries runs through its Backend kernel.
constexpr size_t kMaxSlots = 64;
constexpr size_t kMaxTemps = 16;

}  // namespace

struct FastNode {
  std::vector<Step> steps;
  std::vector<Temp> temps;
  std::vector<Output> outputs;
  // after finish: per temp, the shared storage (null: allocated per call); per output, the
  // tensor viewing the shared storage (undefined: made per call)
  std::vector<std::shared_ptr<Storage>> shared;
  std::vector<char*> shared_base;
  std::vector<Tensor> made;
  std::vector<char> to_env;  // per output: whether a value of env needs it as a tensor
  // the data pointers patched at each call: a descriptor and where its data lies
  struct Patch {
    kiln_tensor* tensor;
    int slot;  // else a temporary allocated per call
    int temp;
    int64_t delta;
  };
  std::vector<Patch> patches;
  std::vector<int> env_slots;  // the slots read from env (the others have fixed addresses)
  std::vector<int> per_call;   // the temporaries allocated at each call
  std::vector<std::shared_ptr<Storage>> fresh;  // their storages during a call
};

namespace {

void fill_descriptor(Step& s, kiln_tensor& d, const Tensor& t) {
  d = kiln::detail::describe(t);
  s.geometry.emplace_back(t.sizes().begin(), t.sizes().end());
  s.geometry.emplace_back(t.strides().begin(), t.strides().end());
}

// Points the step's descriptors, call and attributes at its own vectors (after it stopped moving).
void bind(Step& s) {
  size_t g = 0;
  for (auto* list : {&s.in, &s.out}) {
    for (kiln_tensor& d : *list) {
      d.sizes = s.geometry[g++].data();
      d.strides = s.geometry[g++].data();
    }
  }
  for (size_t i = 0; i < s.attrs.size(); ++i) {
    if (s.attrs[i].kind == KILN_ATTR_I64S) s.attrs[i].value.list.v = s.lists[i].data();
  }
  s.call = kiln_call{sizeof(kiln_call),
                     s.op->name(),
                     s.in.data(),
                     static_cast<int32_t>(s.in.size()),
                     s.out.data(),
                     static_cast<int32_t>(s.out.size()),
                     s.attrs.data(),
                     static_cast<int32_t>(s.attrs.size()),
                     nullptr};
}

void run_steps(FastNode& f, const void* const* slot_data, char* const* temp_base) {
  for (Step& s : f.steps) {
    for (size_t j = 0; j < s.in.size(); ++j) {
      const Ref& r = s.in_ref[j];
      const char* base = r.slot >= 0 ? as_bytes(slot_data[static_cast<size_t>(r.slot)])
                                     : temp_base[static_cast<size_t>(r.temp)];
      s.in[j].data = const_cast<char*>(base) + r.delta;
    }
    for (size_t j = 0; j < s.out.size(); ++j) {
      s.out[j].data = temp_base[static_cast<size_t>(s.out_ref[j].temp)] + s.out_ref[j].delta;
    }
    if (s.fn(&s.call, s.user) != 0) {
      kiln::detail::throw_plugin_error(kiln::detail::str(s.op->name(), " on ", s.device.str(),
                                                         ": "),
                                       kiln::detail::take_plugin_failure());
    }
  }
}

Tensor make_output(const Output& o, const std::shared_ptr<Storage>& storage) {
  return kiln::detail::make_tensor(storage, o.sizes, o.strides, o.offset, o.dtype);
}

// The node's kernels as a FastNode, or null when they do not explain it (Note [Replay plan]).
std::unique_ptr<FastNode> analyse(const Node& n, std::vector<CapturedKernel>& kernels,
                                  const std::vector<Tensor>& outputs) {
  if (kernels.empty() || has_effects(n.call->op()) || n.detach || outputs.empty() ||
      n.slots.size() > kMaxSlots) {
    return nullptr;
  }
  std::vector<const Storage*> slot_storage;
  for (size_t k = 0; k < n.slots.size(); ++k) {
    const Tensor& t = *n.slots[k];
    const Storage* s = n.inputs[k] >= 0 && t.defined() ? t.storage().get() : nullptr;
    for (size_t j = 0; s != nullptr && j < k; ++j) {
      if (slot_storage[j] == s && n.inputs[j] != n.inputs[k]) {
        return nullptr;  // two values share a storage: which one a kernel reads is ambiguous
      }
    }
    slot_storage.push_back(s);
  }
  auto f = std::make_unique<FastNode>();
  auto temp_of = [&](const Storage* s) -> int {
    for (size_t t = 0; t < f->temps.size(); ++t) {
      if (f->temps[t].sample.get() == s) return static_cast<int>(t);
    }
    return -1;
  };
  auto slot_of = [&](const Storage* s) -> int {
    auto it = std::find(slot_storage.begin(), slot_storage.end(), s);
    return it == slot_storage.end() ? -1 : static_cast<int>(it - slot_storage.begin());
  };
  for (CapturedKernel& c : kernels) {
    if (c.kernel.fn == nullptr) return nullptr;
    Step s;
    s.fn = reinterpret_cast<kiln_kernel_fn>(c.kernel.fn);
    s.user = c.kernel.user;
    s.op = c.op;
    s.device = c.device;
    s.in.resize(c.inputs.size());
    s.out.resize(c.outputs.size());
    for (size_t j = 0; j < c.inputs.size(); ++j) {
      const Tensor& t = c.inputs[j];
      const Storage* st = t.storage().get();
      Ref r;
      r.temp = temp_of(st);
      if (r.temp >= 0) {
        r.delta = as_bytes(t.impl().data()) - as_bytes(st->data());
      } else {
        r.slot = slot_of(st);
        if (r.slot < 0) return nullptr;  // a tensor the node made without a kernel
        r.delta = as_bytes(t.impl().data()) - as_bytes(n.slots[size_t(r.slot)]->impl().data());
      }
      fill_descriptor(s, s.in[j], t);
      s.in_ref.push_back(r);
    }
    for (size_t j = 0; j < c.outputs.size(); ++j) {
      const Tensor& t = c.outputs[j];
      const Storage* st = t.storage().get();
      if (slot_of(st) >= 0) return nullptr;  // writes an input
      Ref r;
      r.temp = temp_of(st);
      if (r.temp < 0) {
        if (f->temps.size() == kMaxTemps) return nullptr;
        r.temp = static_cast<int>(f->temps.size());
        f->temps.push_back({t.storage(), st->nbytes(), st->device(), -1});
      }
      r.delta = as_bytes(t.impl().data()) - as_bytes(st->data());
      fill_descriptor(s, s.out[j], t);
      s.out_ref.push_back(r);
    }
    s.attrs = c.attrs;
    s.lists = c.lists;
    f->steps.push_back(std::move(s));
  }
  for (const Tensor& t : outputs) {
    Output o;
    if (t.defined()) {
      o.temp = temp_of(t.storage().get());
      if (o.temp < 0) return nullptr;  // returns a tensor no kernel wrote
      o.sizes.assign(t.sizes().begin(), t.sizes().end());
      o.strides.assign(t.strides().begin(), t.strides().end());
      o.offset = t.storage_offset();
      o.dtype = t.dtype();
    }
    f->outputs.push_back(std::move(o));
  }
  for (Step& s : f->steps) bind(s);
  return f;
}

// Runs f from its argument blocks into fresh storages filled with garbage; whether it returns
// the bytes the Backend kernel returned.
bool validate(FastNode& f, const Node& n, const std::vector<Tensor>& expected) {
  const void* slot_data[kMaxSlots] = {};
  for (size_t k = 0; k < n.slots.size(); ++k) {
    slot_data[k] = n.slots[k]->defined() ? n.slots[k]->impl().data() : nullptr;
  }
  std::vector<std::shared_ptr<Storage>> storages;
  std::vector<char*> base;
  for (const Temp& t : f.temps) {
    storages.push_back(std::make_shared<Storage>(t.device, t.nbytes));
    Tensor bytes =
        kiln::detail::make_tensor(storages.back(), {static_cast<int64_t>(t.nbytes)}, {1}, 0, kByte);
    bytes.fill_(0xA5);
    base.push_back(static_cast<char*>(storages.back()->data()));
  }
  run_steps(f, slot_data, base.data());
  for (size_t k = 0; k < expected.size(); ++k) {
    const Output& o = f.outputs[k];
    if (o.temp < 0) continue;
    Tensor got = make_output(o, storages[static_cast<size_t>(o.temp)]);
    if (got.strides() != expected[k].strides() ||
        kiln::detail::host_bytes(got) != kiln::detail::host_bytes(expected[k])) {
      return false;
    }
  }
  return true;
}

}  // namespace

ReplayPlan::ReplayPlan(const Graph& graph, const std::vector<Tensor>& inputs) : graph_(graph) {
  for (const Tensor& t : inputs) {
    input_sizes_.emplace_back(t.sizes().begin(), t.sizes().end());
    input_strides_.emplace_back(t.strides().begin(), t.strides().end());
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const Value& value = graph.values[v];
    if (value.kind == ValueKind::Parameter) {
      parameter_strides_.emplace_back(static_cast<int>(v),
                                      std::vector<int64_t>(value.tensor.strides().begin(),
                                                           value.tensor.strides().end()));
    }
  }
  fast_.resize(graph.nodes.size());
}

ReplayPlan::~ReplayPlan() { abort_node(); }

void ReplayPlan::begin_node() {
  abort_node();
  capture_ = new std::vector<CapturedKernel>();
  previous_capture_ = kiln::detail::set_kernel_capture(capture_);
}

void ReplayPlan::abort_node() {
  if (capture_ == nullptr) return;
  kiln::detail::set_kernel_capture(previous_capture_);
  delete capture_;
  capture_ = nullptr;
}

void ReplayPlan::end_node(size_t i, const std::vector<Tensor>& outputs) {
  kiln::detail::set_kernel_capture(previous_capture_);
  std::unique_ptr<std::vector<CapturedKernel>> kernels(capture_);
  capture_ = nullptr;
  const Node& n = graph_.nodes[i];
  std::unique_ptr<FastNode> f = analyse(n, *kernels, outputs);
  kernels.reset();
  if (f != nullptr && validate(*f, n, outputs)) fast_[i] = std::move(f);
}

void ReplayPlan::finish() {
  const Graph& g = graph_;
  // the buffers: one per temporary of a fast node, live from its node on
  struct Buffer {
    size_t nbytes;
    Device device;
    size_t first, last;
    bool per_call = false;
  };
  std::vector<Buffer> buffers;
  std::vector<std::vector<int>> held(g.values.size());  // per value: the buffers it may lie in
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (FastNode* f = fast_[i].get()) {
      for (Temp& t : f->temps) {
        t.buffer = static_cast<int>(buffers.size());
        buffers.push_back({t.nbytes, t.device, i, i});
        t.sample.reset();
      }
      for (size_t k = 0; k < n.outputs.size() && k < f->outputs.size(); ++k) {
        int v = n.outputs[k];
        if (v >= 0 && f->outputs[k].temp >= 0) {
          held[size_t(v)] = {f->temps[size_t(f->outputs[k].temp)].buffer};
        }
      }
    } else {
      std::vector<int> all;
      for (int v : n.inputs) {
        if (v >= 0) all.insert(all.end(), held[size_t(v)].begin(), held[size_t(v)].end());
      }
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      for (int v : n.outputs) {
        if (v >= 0) held[size_t(v)] = all;
      }
    }
    for (int v : n.inputs) {
      if (v < 0) continue;
      for (int b : held[size_t(v)]) buffers[size_t(b)].last = std::max(buffers[size_t(b)].last, i);
    }
  }
  for (int v : g.outputs) {
    for (int b : held[size_t(v)]) buffers[size_t(b)].per_call = true;
  }
  // shared storages by interval: the largest free one of the device, grown to fit
  struct Shared {
    size_t nbytes;
    Device device;
    size_t free_after;
    bool used_yet;
  };
  std::vector<Shared> shared;
  std::vector<int> shared_of(buffers.size(), -1);
  for (size_t b = 0; b < buffers.size(); ++b) {
    const Buffer& buf = buffers[b];
    if (buf.per_call) continue;
    int best = -1;
    for (size_t s = 0; s < shared.size(); ++s) {
      if (shared[s].device != buf.device || shared[s].free_after >= buf.first) continue;
      if (best < 0 || shared[s].nbytes > shared[size_t(best)].nbytes) best = static_cast<int>(s);
    }
    if (best < 0) {
      best = static_cast<int>(shared.size());
      shared.push_back({0, buf.device, 0, false});
    }
    Shared& s = shared[size_t(best)];
    s.nbytes = std::max(s.nbytes, buf.nbytes);
    s.free_after = buf.last;
    shared_of[b] = best;
  }
  std::vector<std::shared_ptr<Storage>> storages;
  pooled_bytes_ = 0;
  for (const Shared& s : shared) {
    storages.push_back(std::make_shared<Storage>(s.device, s.nbytes));
    pooled_bytes_ += s.nbytes;
  }
  // values that a node which is not fast, or the caller, reads as a tensor
  std::vector<char> as_tensor(g.values.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (fast_[i] != nullptr) continue;
    for (int v : g.nodes[i].inputs) {
      if (v >= 0) as_tensor[size_t(v)] = 1;
    }
  }
  for (int v : g.outputs) as_tensor[size_t(v)] = 1;
  std::vector<char*> fixed(g.values.size(), nullptr);  // a value in a shared storage: its data
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (fast_[i] == nullptr) continue;
    FastNode* f = fast_[i].get();
    const Node& n = g.nodes[i];
    f->shared.assign(f->temps.size(), nullptr);
    f->fresh.assign(f->temps.size(), nullptr);
    f->shared_base.assign(f->temps.size(), nullptr);
    for (size_t t = 0; t < f->temps.size(); ++t) {
      int s = shared_of[size_t(f->temps[t].buffer)];
      if (s < 0) {
        f->per_call.push_back(static_cast<int>(t));
        continue;
      }
      f->shared[t] = storages[size_t(s)];
      f->shared_base[t] = static_cast<char*>(f->shared[t]->data());
    }
    f->made.assign(f->outputs.size(), Tensor());
    f->to_env.assign(f->outputs.size(), 0);
    for (size_t k = 0; k < f->outputs.size(); ++k) {
      const Output& o = f->outputs[k];
      int v = k < n.outputs.size() ? n.outputs[k] : -1;
      if (o.temp < 0 || v < 0) continue;
      f->to_env[k] = as_tensor[size_t(v)];
      if (f->shared[size_t(o.temp)] == nullptr) continue;
      fixed[size_t(v)] = f->shared_base[size_t(o.temp)] + o.offset * element_size(o.dtype);
      if (f->to_env[k]) f->made[k] = make_output(o, f->shared[size_t(o.temp)]);
    }
    // the descriptors' data: fixed now, or patched at each call
    std::vector<char> read_from_env(n.inputs.size(), 0);
    for (Step& st : f->steps) {
      for (size_t j = 0; j < st.in.size() + st.out.size(); ++j) {
        bool input = j < st.in.size();
        kiln_tensor& d = input ? st.in[j] : st.out[j - st.in.size()];
        const Ref& r = input ? st.in_ref[j] : st.out_ref[j - st.in.size()];
        char* base = nullptr;
        if (r.slot >= 0) {
          int v = n.inputs[size_t(r.slot)];
          base = fixed[size_t(v)];
          if (base == nullptr) read_from_env[size_t(r.slot)] = 1;
        } else {
          base = f->shared_base[size_t(r.temp)];
        }
        if (base != nullptr) {
          d.data = base + r.delta;
        } else {
          f->patches.push_back({&d, r.slot, r.temp, r.delta});
        }
      }
    }
    for (size_t k = 0; k < read_from_env.size(); ++k) {
      if (read_from_env[k]) f->env_slots.push_back(static_cast<int>(k));
    }
  }
}

bool ReplayPlan::matches(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != input_strides_.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].strides() != IntArrayRef(input_strides_[i]) ||
        inputs[i].sizes() != IntArrayRef(input_sizes_[i])) {
      return false;
    }
  }
  for (const auto& [v, strides] : parameter_strides_) {
    const Tensor& t = graph_.values[size_t(v)].tensor;
    if (t.strides() != IntArrayRef(strides)) return false;
  }
  return true;
}

size_t ReplayPlan::num_fast() const {
  size_t n = 0;
  for (const auto& f : fast_) n += f != nullptr;
  return n;
}

void ReplayPlan::run_node(size_t i, std::vector<Tensor>& env) const {
  FastNode& f = *fast_[i];
  const Node& n = graph_.nodes[i];
  const char* slot_data[kMaxSlots];
  char* base[kMaxTemps];
  std::vector<std::shared_ptr<Storage>>& fresh = f.fresh;  // calls are serialized
  for (int k : f.env_slots) {
    slot_data[k] = as_bytes(env[size_t(n.inputs[size_t(k)])].impl().data());
  }
  for (int t : f.per_call) {
    fresh[size_t(t)] =
        std::make_shared<Storage>(f.temps[size_t(t)].device, f.temps[size_t(t)].nbytes);
    base[t] = static_cast<char*>(fresh[size_t(t)]->data());
  }
  for (const FastNode::Patch& p : f.patches) {
    const char* b = p.slot >= 0 ? slot_data[p.slot] : base[p.temp];
    p.tensor->data = const_cast<char*>(b) + p.delta;
  }
  for (Step& s : f.steps) {
    if (s.fn(&s.call, s.user) != 0) [[unlikely]] {
      kiln::detail::throw_plugin_error(kiln::detail::str(s.op->name(), " on ", s.device.str(),
                                                         ": "),
                                       kiln::detail::take_plugin_failure());
    }
  }
  for (size_t k = 0; k < f.outputs.size(); ++k) {
    if (!f.to_env[k]) continue;
    const Output& o = f.outputs[k];
    if (f.made[k].defined()) {
      env[size_t(n.outputs[k])] = f.made[k];
    } else {
      env[size_t(n.outputs[k])] = make_output(o, fresh[size_t(o.temp)]);
    }
  }
  for (int t : f.per_call) fresh[size_t(t)].reset();
}

}  // namespace kiln::jit::detail
