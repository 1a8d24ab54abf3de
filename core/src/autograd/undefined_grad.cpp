// UndefinedGrad (kiln/autograd.h): outputs whose backward gives no gradient.
#include <kiln/autograd.h>

namespace kiln::autograd {

namespace {
class UndefinedGradBackward : public Node {
 public:
  std::string name() const override { return "UndefinedGradBackward"; }
  std::vector<Tensor> apply(std::vector<Tensor>&&) override {
    return std::vector<Tensor>(next_edges().size());
  }
};
}  // namespace

std::vector<Tensor> UndefinedGrad::apply(std::vector<Tensor>&& inputs) {
  bool record = false;
  for (const Tensor& input : inputs) record = record || detail::any_requires_grad({&input});
  std::shared_ptr<Node> node = record ? std::make_shared<UndefinedGradBackward>() : nullptr;
  std::vector<Tensor> outputs;
  outputs.reserve(inputs.size());
  for (const Tensor& input : inputs) {
    Tensor output;
    if (input.defined()) {
      NoGradGuard no_grad;
      output = input.clone();
    }
    if (node) {
      node->add_next_edge(input.defined() ? detail::gradient_edge(input) : Edge{});
      if (output.defined()) detail::set_history(output, node);
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

}  // namespace kiln::autograd
