// Grad mode and inference mode: the calling thread's switches of the Autograd layer (GradMode is
// the Autograd key in the thread's excluded dispatch keys).
#include <kiln/autograd.h>
#include <kiln/dispatch.h>

namespace kiln::autograd {
namespace {

thread_local bool t_inference_mode __attribute__((tls_model("initial-exec"))) = false;

}  // namespace

bool GradMode::is_enabled() {
  return (kiln::detail::local_dispatch_state().excluded & key_bit(DispatchKey::Autograd)) == 0;
}

void GradMode::set_enabled(bool enabled) {
  kiln::detail::LocalDispatchState& tls = kiln::detail::local_dispatch_state();
  tls.grad_mode_off = !enabled;
  uint8_t& excluded = tls.excluded;
  if (enabled) {
    excluded &= static_cast<uint8_t>(~key_bit(DispatchKey::Autograd));
  } else {
    excluded |= key_bit(DispatchKey::Autograd);
  }
}

AutoGradMode::AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) {
  GradMode::set_enabled(enabled);
}
AutoGradMode::~AutoGradMode() { GradMode::set_enabled(previous_); }

InferenceMode::InferenceMode(bool enabled)
    : previous_grad_(GradMode::is_enabled()), previous_inference_(t_inference_mode) {
  t_inference_mode = enabled;
  GradMode::set_enabled(!enabled);  // InferenceMode(false) turns grad mode on, as PyTorch's
}
InferenceMode::~InferenceMode() {
  t_inference_mode = previous_inference_;
  GradMode::set_enabled(previous_grad_);
}
bool InferenceMode::is_enabled() { return t_inference_mode; }

}  // namespace kiln::autograd
