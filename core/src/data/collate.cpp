// Collation into batches. See kiln/data/collate.h.
#include <kiln/data/collate.h>

#include <kiln/error.h>
#include <kiln/ops.h>

#include <cstring>

namespace kiln::data {
namespace {

std::string where(const std::string& path) { return path.empty() ? "" : " at '" + path + "'"; }

Sample collate_at(const std::vector<Sample>& samples, const std::string& path) {
  const Sample& first = samples.front();
  for (size_t i = 1; i < samples.size(); ++i) {
    bool same = samples[i].kind() == first.kind() ||
                (first.is_double() && samples[i].is_int());  // 1 and 2.5 make a float64 batch
    KILN_CHECK_TYPE(same, "collate: entry 0", where(path), " is ", kind_name(first.kind()),
                    " but entry ", i, " is ", kind_name(samples[i].kind()), " (", samples[i].repr(),
                    ")");
  }
  switch (first.kind()) {
    case Sample::Kind::None:
      throw TypeError(kiln::detail::str("collate: entry 0", where(path), " is None; default ",
                                        "collate handles tensors, numbers, strings, lists and ",
                                        "maps (pass a collate_fn, or drop the field)"));
    case Sample::Kind::Tensor: {
      std::vector<Tensor> tensors;
      tensors.reserve(samples.size());
      for (const Sample& s : samples) tensors.push_back(s.tensor());
      try {
        return stack_tensors(tensors);
      } catch (const ValueError& e) {
        throw ValueError(kiln::detail::str("collate", where(path), ": ", e.what()));
      }
    }
    case Sample::Kind::Bool: {
      Tensor out = empty({static_cast<int64_t>(samples.size())}, kBool);
      bool* p = out.data_ptr<bool>();
      for (size_t i = 0; i < samples.size(); ++i) p[i] = samples[i].to_bool();
      return out;
    }
    case Sample::Kind::Int: {
      Tensor out = empty({static_cast<int64_t>(samples.size())}, kLong);
      int64_t* p = out.data_ptr<int64_t>();
      for (size_t i = 0; i < samples.size(); ++i) p[i] = samples[i].to_int();
      return out;
    }
    case Sample::Kind::Double: {
      Tensor out = empty({static_cast<int64_t>(samples.size())}, kDouble);
      double* p = out.data_ptr<double>();
      for (size_t i = 0; i < samples.size(); ++i) p[i] = samples[i].to_double();
      return out;
    }
    case Sample::Kind::String: {
      Sample::List out;
      out.reserve(samples.size());
      for (const Sample& s : samples) out.push_back(s.str());
      return out;
    }
    case Sample::Kind::List: {
      int64_t n = first.size();
      for (size_t i = 1; i < samples.size(); ++i) {
        KILN_CHECK_VALUE(samples[i].size() == n, "collate: each element in list of batch should ",
                         "be of equal size: entry 0", where(path), " has ", n, " items but entry ",
                         i, " has ", samples[i].size());
      }
      Sample::List out;
      std::vector<Sample> column(samples.size());
      for (int64_t j = 0; j < n; ++j) {
        for (size_t i = 0; i < samples.size(); ++i) column[i] = samples[i].list()[j];
        out.push_back(collate_at(column, path + "[" + std::to_string(j) + "]"));
      }
      return out;
    }
    case Sample::Kind::Map: {
      Sample::Map out;
      std::vector<Sample> column(samples.size());
      for (const auto& [key, value] : first.map()) {
        std::string sub = path.empty() ? key : path + "." + key;
        for (size_t i = 0; i < samples.size(); ++i) {
          const Sample::Map& m = samples[i].map();
          auto it = m.find(key);
          KILN_CHECK_INDEX(it != m.end(), "collate: entry ", i, where(path), " has no key '", key,
                           "' that entry 0 has (", samples[i].repr(), ")");
          column[i] = it->second;
        }
        out.emplace(key, collate_at(column, sub));
      }
      return out;
    }
  }
  throw Error("collate: internal error: unknown kind");
}

}  // namespace

Tensor stack_tensors(const std::vector<Tensor>& tensors) {
  KILN_CHECK_VALUE(!tensors.empty(), "stack expects a non-empty TensorList");
  const Tensor& t0 = tensors.front();
  bool fast = t0.is_cpu();
  for (size_t i = 0; i < tensors.size() && fast; ++i) {
    const Tensor& t = tensors[i];
    fast = t.is_cpu() && t.dtype() == t0.dtype() && t.is_contiguous() &&
           t.sizes().equals(t0.sizes()) && !t.requires_grad();
  }
  if (!fast) return stack(tensors);
  DimVector sizes{static_cast<int64_t>(tensors.size())};
  for (int64_t s : t0.sizes()) sizes.push_back(s);
  Tensor out = empty(sizes, TensorOptions().dtype(t0.dtype()));
  auto* dst = static_cast<char*>(out.data_ptr());
  size_t bytes = t0.nbytes();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (bytes > 0) std::memcpy(dst + i * bytes, tensors[i].data_ptr(), bytes);
  }
  return out;
}

Sample collate(const std::vector<Sample>& samples) {
  KILN_CHECK_VALUE(!samples.empty(), "collate: expects at least one sample");
  return collate_at(samples, "");
}

}  // namespace kiln::data
