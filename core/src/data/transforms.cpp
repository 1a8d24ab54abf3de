// Sample transforms. See kiln/data/transforms.h.
#include <kiln/data/transforms.h>

#include <kiln/error.h>
#include <kiln/ops.h>

namespace kiln::data::transforms {

data::Transform compose(std::vector<data::Transform> transforms) {
  return [transforms = std::move(transforms)](Sample s) {
    for (const data::Transform& t : transforms) s = t(std::move(s));
    return s;
  };
}

data::Transform to_tuple(std::vector<std::string> names) {
  return [names = std::move(names)](Sample s) {
    Sample::List out;
    out.reserve(names.size());
    for (const std::string& n : names) out.push_back(std::move(s.at(n)));
    return Sample(std::move(out));
  };
}

data::Transform select(std::vector<std::string> names) {
  return [names = std::move(names)](Sample s) {
    Sample::Map out;
    for (const std::string& n : names) out.emplace(n, std::move(s.at(n)));
    return Sample(std::move(out));
  };
}

data::Transform map_field(std::string name, data::Transform fn) {
  return [name = std::move(name), fn = std::move(fn)](Sample s) {
    Sample& field = s.at(name);
    field = fn(std::move(field));
    return s;
  };
}

data::Transform to_chw_float(std::string name) {
  return map_field(std::move(name), [](Sample s) {
    const Tensor& t = s.tensor();
    KILN_CHECK_VALUE(t.dim() == 3, "to_chw_float: expects an image [H, W, C], got ", t.sizes());
    return Sample(t.permute({2, 0, 1}).to(kFloat).div(255.0).contiguous());
  });
}

}  // namespace kiln::data::transforms
