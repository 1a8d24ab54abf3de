// Automatic differentiation.
//
// A tensor that requires grad records, as operators run on it, a graph of Nodes: each output of
// a differentiable operator points (grad_fn) at the Node that computes the gradients of that
// operator's inputs from the gradient of its outputs; each Node points (next_edges) at the Nodes
// of its inputs. Leaves that require grad end in an AccumulateGrad node that adds into .grad().
// backward() and grad() walk this graph from the outputs, in reverse order of creation.
//
// Backward formulas are kiln operators (see KILN_BACKWARD in core/src/autograd/function.h), so
// with create_graph the backward pass is itself recorded and can be differentiated again.
//
// The Autograd dispatch layer does the recording (kiln/dispatch.h): grad mode off means the
// Autograd key is excluded on this thread (NoGradGuard).
#pragma once

#include <kiln/dispatch.h>
#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::autograd {

class Node;

// An input of a Node: the Node that takes the gradient, and which of its inputs it is.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

// The sizes, dtype and device of a forward output, so the engine can check a gradient and make
// zeros for an output that received none.
struct OutputMeta {
  DimVector sizes;
  ScalarType dtype = kFloat;
  Device device = Device(kCPU);
};

// A step of the backward graph.
class KILN_API Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // "AddBackward0"-style name, as PyTorch prints grad_fn.
  virtual std::string name() const = 0;
  // Gradients of the forward outputs (one per output, undefined = zero) to gradients of the
  // forward inputs (one per next edge; undefined = none).
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Frees saved tensors after a backward pass without retain_graph.
  virtual void release_variables() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void add_next_edge(Edge edge) { next_edges_.push_back(std::move(edge)); }
  const std::vector<OutputMeta>& output_meta() const { return outputs_; }
  uint32_t add_output(const Tensor& output);
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Hooks on the gradient of forward output `output_nr`, run before apply (Tensor::register_hook
  // on a non-leaf). A hook returning an undefined tensor leaves the gradient unchanged.
  using Hook = std::function<Tensor(const Tensor&)>;
  void add_output_hook(uint32_t output_nr, Hook hook) {
    output_hooks_.emplace_back(output_nr, std::move(hook));
  }
  const std::vector<std::pair<uint32_t, Hook>>& output_hooks() const { return output_hooks_; }
  // Disables hook `index` of output_hooks() (an empty Hook is skipped); the others keep theirs.
  void remove_output_hook(size_t index) { output_hooks_.at(index).second = nullptr; }

 private:
  std::vector<Edge> next_edges_;
  std::vector<OutputMeta> outputs_;
  std::vector<std::pair<uint32_t, Hook>> output_hooks_;
  uint64_t sequence_nr_;
};

// How a view of a tensor that requires grad was made, as PyTorch's CreationMeta: a view made while
// grad mode was off or in InferenceMode has no history of its own and may not be changed in place
// with grad mode on (the in-place change could not be recorded on its base). See Note [Views made
// without recording] (core/src/autograd/inplace_view.cpp).
enum class CreationMeta : uint8_t { Default, NoGradMode, InferenceMode };

// Autograd state of a tensor (TensorImpl::autograd), created when first needed.
struct KILN_API AutogradMeta {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;         // null for leaves
  std::weak_ptr<Node> grad_accumulator;  // leaves only
  uint32_t output_nr = 0;
  bool retains_grad = false;
  bool is_view = false;  // a view of a tensor that requires grad
  // The tensor a view's grad_fn views (Note [In-place on views]). The view holds it, not its
  // node: a node holding it would close a cycle base -> CopySlices -> ... -> node -> base.
  Tensor view_base;
  std::vector<Node::Hook> hooks;  // leaf hooks (non-leaf hooks live on grad_fn)
  // leaf hooks run after a gradient is accumulated into grad() (removed ones are empty)
  std::vector<std::function<void(const Tensor&)>> post_accumulate_hooks;
  CreationMeta creation_meta = CreationMeta::Default;  // views only
  uint32_t creation_version = 0;  // the storage version when such a view was made
};

// Grad mode: whether operators record the graph on this thread.
struct KILN_API GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope, restoring the previous mode (also on exceptions).
class KILN_API AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

// Disables recording for a scope: kiln::NoGradGuard no_grad;
class KILN_API NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// Like NoGradGuard, and tensors created inside are inference tensors: using one in a recorded
// computation later raises an error.
class KILN_API InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  bool previous_grad_;
  bool previous_inference_;
};

// Anomaly detection, as torch::autograd::AnomalyMode: while enabled (for every thread), the
// backward pass checks each node's gradients and throws when one holds a NaN, naming the node
// ("Function 'DivBackward0' returned nan values in its 1th output."). For debugging: each check
// reads the gradient on the host.
struct KILN_API AnomalyMode {
  static bool is_enabled();
  static bool should_check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
};

// Enables anomaly detection for a scope, restoring the previous state.
class KILN_API DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_enabled_;
  bool previous_check_nan_;
};

// libtorch's make_variable: `data`'s values as a new leaf sharing its storage, requiring grad
// when asked.
inline Tensor make_variable(const Tensor& data, bool requires_grad = false,
                            bool /*allow_tensor_metadata_change*/ = true) {
  Tensor variable = data.data();
  if (requires_grad) variable.requires_grad_(true);
  return variable;
}

// As libtorch's torch::autograd::UndefinedGrad, for testing that backward formulas handle
// undefined gradients: apply() returns copies of its inputs whose backward passes undefined
// gradients (no gradient) to the inputs.
class KILN_API UndefinedGrad {
 public:
  std::vector<Tensor> apply(std::vector<Tensor>&& inputs);
};

// Computes the gradients of `tensors` with respect to the graph leaves and accumulates them in
// their .grad(). grad_tensors: one per tensor (may be empty for scalar outputs, meaning 1).
KILN_API void backward(const std::vector<Tensor>& tensors,
                       const std::vector<Tensor>& grad_tensors = {},
                       std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                       const std::vector<Tensor>& inputs = {});

// The gradients of outputs with respect to inputs, returned instead of accumulated (.grad() is
// untouched). allow_unused: an input that outputs do not depend on gives an undefined tensor
// instead of an error.
KILN_API std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& grad_outputs = {},
                                  std::optional<bool> retain_graph = std::nullopt,
                                  bool create_graph = false, bool allow_unused = false);

// Calls hook(t) each time backward has accumulated a gradient into t.grad(), t a leaf that
// requires grad: PyTorch's Tensor.register_post_accumulate_grad_hook (a post hook of t's
// AccumulateGrad node). The hook sees the accumulated t.grad() (and may read or change it in
// place); the pre-accumulation hooks of Tensor::register_hook run before. Returns the hook's
// index for remove_post_accumulate_grad_hook. Throws RuntimeError for a tensor that does not
// require grad or is not a leaf.
KILN_API unsigned register_post_accumulate_grad_hook(const Tensor& t,
                                                     std::function<void(const Tensor&)> hook);
// Disables the hook register_post_accumulate_grad_hook returned `pos` for; IndexError for an
// index no such hook of t has.
KILN_API void remove_post_accumulate_grad_hook(const Tensor& t, unsigned pos);

namespace detail {
// The autograd state of t, created on first use.
KILN_API AutogradMeta& meta(const Tensor& t);
// The meta if it exists.
KILN_API AutogradMeta* meta_if(const Tensor& t);
// The edge a gradient for t flows into: its grad_fn, or its leaf accumulator, or none.
KILN_API Edge gradient_edge(const Tensor& t);
// Makes `node` the grad_fn of output t (t then requires grad).
KILN_API void set_history(const Tensor& t, const std::shared_ptr<Node>& node);
// Whether any of the tensors requires grad and grad mode is on.
KILN_API bool any_requires_grad(std::initializer_list<const Tensor*> tensors);
}  // namespace detail

}  // namespace kiln::autograd

namespace kiln {
using autograd::AutoGradMode;
using autograd::InferenceMode;
using autograd::NoGradGuard;
}  // namespace kiln
