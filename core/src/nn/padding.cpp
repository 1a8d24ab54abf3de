// The padding modules' printing, as libtorch's (kiln::nn::ReflectionPad2d(padding=[1, 1, 2, 0])).
#include <kiln/nn/modules/padding.h>

namespace kiln::nn {

void ReflectionPad1dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReflectionPad1d(padding=" << options.padding() << ")";
}
void ReflectionPad2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReflectionPad2d(padding=" << options.padding() << ")";
}
void ReflectionPad3dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReflectionPad3d(padding=" << options.padding() << ")";
}
void ReplicationPad1dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReplicationPad1d(padding=" << options.padding() << ")";
}
void ReplicationPad2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReplicationPad2d(padding=" << options.padding() << ")";
}
void ReplicationPad3dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ReplicationPad3d(padding=" << options.padding() << ")";
}
void ZeroPad2dImpl::pretty_print(std::ostream& stream) const {
  stream << "kiln::nn::ZeroPad2d(padding=" << options.padding() << ")";
}

}  // namespace kiln::nn
