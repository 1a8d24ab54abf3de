// Operators that build new shapes from data: cat stack repeat gather index_select one_hot tril
// triu. Their references are written with host loops or checked against PyTorch's outputs.
#include "conformance.h"

namespace conformance {
namespace {

using namespace kiln;

// A host tensor's values (float64, contiguous).
std::vector<double> host_values(const Tensor& t) {
  Tensor h = host_double(t);
  const double* p = h.data_ptr<double>();
  return std::vector<double>(p, p + h.numel());
}

Tensor index_tensor(std::vector<int64_t> sizes, const std::vector<double>& v) {
  return values(std::move(sizes), v, kLong);
}

}  // namespace

void register_shape_cases() {
  // cat along each dim of [2, 3] pieces; the reference places blocks by index arithmetic
  for (int64_t dim : {0, 1, -1}) {
    std::string name = "cat_dim" + std::string(dim < 0 ? "m1" : std::to_string(dim));
    add_case({.name = name,
              .op = "cat",
              .gradient = true,
              .dtypes = kAll,
              .inputs =
                  [dim](ScalarType d) {
                    using Sizes = std::vector<int64_t>;
                    bool rows = dim == 0;
                    return Args{sample(rows ? Sizes{2, 3} : Sizes{3, 2}, d, -5, 5, 1),
                                sample(rows ? Sizes{1, 3} : Sizes{3, 1}, d, -5, 5, 2),
                                sample({3, 3}, d, -5, 5, 3)};
                  },
              .run =
                  [dim](const Args& a) {
                    return Outputs{cat({a.t(0), a.t(1), a.t(2)}, dim)};
                  },
              .reference =
                  [dim](const Args& a, ScalarType) {
                    bool rows = dim == 0;
                    std::vector<std::vector<double>> parts;
                    std::vector<int64_t> widths;
                    for (const Tensor& t : a.tensors) {
                      parts.push_back(host_values(t));
                      widths.push_back(rows ? t.size(0) : t.size(1));
                    }
                    std::vector<double> out;
                    if (rows) {
                      for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
                      return Outputs{values({6, 3}, out, kDouble)};
                    }
                    for (int64_t r = 0; r < 3; ++r) {
                      for (size_t k = 0; k < parts.size(); ++k) {
                        for (int64_t c = 0; c < widths[k]; ++c) {
                          out.push_back(parts[k][r * widths[k] + c]);
                        }
                      }
                    }
                    return Outputs{values({3, 6}, out, kDouble)};
                  }});
  }
  // stack = cat of unsqueezed tensors; the reference is built with cat and unsqueeze
  for (int64_t dim : {0, 1, 2, -1}) {
    std::string name = "stack_dim" + std::string(dim < 0 ? "m1" : std::to_string(dim));
    add_case({.name = name,
              .op = "stack",
              .gradient = true,
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample({2, 3}, d, -5, 5, 4), sample({2, 3}, d, -5, 5, 5)};
                  },
              .run =
                  [dim](const Args& a) {
                    return Outputs{stack({a.t(0), a.t(1)}, dim)};
                  },
              .reference =
                  [dim](const Args& a, ScalarType) {
                    std::vector<double> x = host_values(a.t(0)), y = host_values(a.t(1));
                    int64_t d = dim < 0 ? dim + 3 : dim;
                    std::vector<int64_t> sizes = {2, 3};
                    sizes.insert(sizes.begin() + d, 2);
                    std::vector<double> out(12);
                    for (int64_t i = 0; i < 2; ++i) {
                      for (int64_t j = 0; j < 3; ++j) {
                        int64_t idx[3];
                        for (int64_t k = 0; k < 2; ++k) {
                          int64_t pos = 0;
                          int64_t coords[2] = {i, j};
                          for (int64_t q = 0, c = 0; q < 3; ++q) idx[q] = q == d ? k : coords[c++];
                          for (int64_t q = 0; q < 3; ++q) pos = pos * sizes[q] + idx[q];
                          out[pos] = (k == 0 ? x : y)[i * 3 + j];
                        }
                      }
                    }
                    return Outputs{values(sizes, out, kDouble)};
                  }});
  }
  add_case({.name = "repeat",
            .op = "repeat",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({2, 3}, d, -5, 5, 6)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{a.t(0).repeat({2, 1, 3}), repeat(a.t(0), {1, 2})};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> x = host_values(a.t(0));
                  std::vector<double> r1, r2;
                  for (int b = 0; b < 2; ++b) {
                    for (int i = 0; i < 2; ++i) {
                      for (int k = 0; k < 3; ++k) {
                        for (int j = 0; j < 3; ++j) r1.push_back(x[i * 3 + j]);
                      }
                    }
                  }
                  for (int i = 0; i < 2; ++i) {
                    for (int k = 0; k < 2; ++k) {
                      for (int j = 0; j < 3; ++j) r2.push_back(x[i * 3 + j]);
                    }
                  }
                  return Outputs{values({2, 2, 9}, r1, kDouble), values({2, 6}, r2, kDouble)};
                }});
  add_case({.name = "gather",
            .op = "gather",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 7),
                              index_tensor({2, 4}, {2, 0, 1, 2, 0, 0, 2, 1}),
                              index_tensor({3, 2}, {3, 0, 1, 1, 2, 3})};
                },
            .run =
                [](const Args& a) {
                  return Outputs{gather(a.t(0), 0, a.t(1)), a.t(0).gather(-1, a.t(2))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> x = host_values(a.t(0)), i0 = host_values(a.t(1)),
                                      i1 = host_values(a.t(2));
                  std::vector<double> g0, g1;
                  for (int r = 0; r < 2; ++r) {
                    for (int c = 0; c < 4; ++c) {
                      g0.push_back(x[static_cast<int>(i0[r * 4 + c]) * 4 + c]);
                    }
                  }
                  for (int r = 0; r < 3; ++r) {
                    for (int c = 0; c < 2; ++c) {
                      g1.push_back(x[r * 4 + static_cast<int>(i1[r * 2 + c])]);
                    }
                  }
                  return Outputs{values({2, 4}, g0, kDouble), values({3, 2}, g1, kDouble)};
                }});
  add_case({.name = "index_select",
            .op = "index_select",
            .gradient = true,
            .dtypes = kAll,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 8), index_tensor({4}, {2, 0, 2, 1}),
                              index_tensor({3}, {3, 3, 0})};
                },
            .run =
                [](const Args& a) {
                  return Outputs{index_select(a.t(0), 0, a.t(1)), a.t(0).index_select(1, a.t(2))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> x = host_values(a.t(0)), i0 = host_values(a.t(1)),
                                      i1 = host_values(a.t(2));
                  std::vector<double> s0, s1;
                  for (double r : i0) {
                    for (int c = 0; c < 4; ++c) s0.push_back(x[static_cast<int>(r) * 4 + c]);
                  }
                  for (int r = 0; r < 3; ++r) {
                    for (double c : i1) s1.push_back(x[r * 4 + static_cast<int>(c)]);
                  }
                  return Outputs{values({4, 4}, s0, kDouble), values({3, 3}, s1, kDouble)};
                }});
  // advanced indexing (Tensor::index, core/src/indexing.cpp): a composite of index_select
  add_case(
      {.name = "index_advanced",
       .op = "index_select",
       .gradient = true,
       .dtypes = kAll,
       .inputs =
           [](ScalarType d) {
             return Args{sample({3, 4}, d, -5, 5, 9), index_tensor({3}, {3, 0, 3}),
                         index_tensor({2}, {2, 0})};
           },
       .run =
           [](const Args& a) {
             using kiln::indexing::Slice;
             return Outputs{a.t(0).index({Slice(), a.t(1)}), a.t(0).index({a.t(2), Slice(1, 3)})};
           },
       .reference =
           [](const Args& a, ScalarType) {
             std::vector<double> x = host_values(a.t(0)), i0 = host_values(a.t(1)),
                                 i1 = host_values(a.t(2));
             std::vector<double> s0, s1;
             for (int r = 0; r < 3; ++r) {
               for (double c : i0) s0.push_back(x[r * 4 + static_cast<int>(c)]);
             }
             for (double r : i1) {
               for (int c = 1; c < 3; ++c) s1.push_back(x[static_cast<int>(r) * 4 + c]);
             }
             return Outputs{values({3, 3}, s0, kDouble), values({2, 2}, s1, kDouble)};
           }});
  // accumulating writes: repeated indices add up
  add_case({.name = "index_add",
            .op = "index_add",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({4, 3}, d, -5, 5, 10), index_tensor({5}, {2, 0, 2, 3, 2}),
                              sample({5, 3}, d, -5, 5, 11), index_tensor({2}, {1, 1}),
                              sample({4, 2}, d, -5, 5, 12)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{index_add(a.t(0), 0, a.t(1), a.t(2)),
                                 index_add(a.t(0), -1, a.t(3), a.t(4))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> x = host_values(a.t(0)), i0 = host_values(a.t(1)),
                                      s0 = host_values(a.t(2)), i1 = host_values(a.t(3)),
                                      s1 = host_values(a.t(4));
                  std::vector<double> r0 = x, r1 = x;
                  for (int i = 0; i < 5; ++i) {
                    for (int c = 0; c < 3; ++c) {
                      r0[static_cast<int>(i0[i]) * 3 + c] += s0[i * 3 + c];
                    }
                  }
                  for (int r = 0; r < 4; ++r) {
                    for (int i = 0; i < 2; ++i) {
                      r1[r * 3 + static_cast<int>(i1[i])] += s1[r * 2 + i];
                    }
                  }
                  return Outputs{values({4, 3}, r0, kDouble), values({4, 3}, r1, kDouble)};
                },
            // each repeated index rounds its partial sum in 16-bit dtypes
            .tolerance_scale = 8});
  add_case({.name = "scatter_add",
            .op = "scatter_add",
            .gradient = true,
            .dtypes = kNumeric,
            .inputs =
                [](ScalarType d) {
                  return Args{sample({3, 4}, d, -5, 5, 13),
                              index_tensor({2, 4}, {2, 0, 2, 1, 2, 0, 0, 1}),
                              sample({2, 4}, d, -5, 5, 14),
                              index_tensor({3, 2}, {3, 3, 0, 1, 2, 0}),
                              sample({3, 3}, d, -5, 5, 15)};
                },
            .run =
                [](const Args& a) {
                  return Outputs{scatter_add(a.t(0), 0, a.t(1), a.t(2)),
                                 scatter_add(a.t(0), 1, a.t(3), a.t(4))};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> x = host_values(a.t(0)), i0 = host_values(a.t(1)),
                                      s0 = host_values(a.t(2)), i1 = host_values(a.t(3)),
                                      s1 = host_values(a.t(4));
                  std::vector<double> r0 = x, r1 = x;
                  for (int i = 0; i < 2; ++i) {
                    for (int j = 0; j < 4; ++j) {
                      r0[static_cast<int>(i0[i * 4 + j]) * 4 + j] += s0[i * 4 + j];
                    }
                  }
                  for (int i = 0; i < 3; ++i) {
                    // src is [3, 3]; only its [3, 2] corner (index's sizes) is added
                    for (int j = 0; j < 2; ++j) {
                      r1[i * 4 + static_cast<int>(i1[i * 2 + j])] += s1[i * 3 + j];
                    }
                  }
                  return Outputs{values({3, 4}, r0, kDouble), values({3, 4}, r1, kDouble)};
                },
            .tolerance_scale = 8});
  add_case({.name = "one_hot",
            .op = "one_hot",
            .dtypes = {kLong},
            .inputs =
                [](ScalarType) {
                  return Args{index_tensor({2, 3}, {0, 3, 1, 1, 2, 0})};
                },
            .run =
                [](const Args& a) {
                  return Outputs{one_hot(a.t(0)), one_hot(a.t(0), 6)};
                },
            .reference =
                [](const Args& a, ScalarType) {
                  std::vector<double> idx = host_values(a.t(0));
                  Outputs out;
                  for (int classes : {4, 6}) {
                    std::vector<double> v;
                    for (double i : idx) {
                      for (int c = 0; c < classes; ++c) v.push_back(c == static_cast<int>(i));
                    }
                    out.push_back(values({2, 3, classes}, v, kDouble));
                  }
                  return out;
                }});
  for (bool lower : {true, false}) {
    std::string op = lower ? "tril" : "triu";
    add_case({.name = op,
              .op = op,
              .dtypes = kAll,
              .inputs =
                  [](ScalarType d) {
                    return Args{sample({2, 3, 4}, d, 1, 5, 9)};
                  },
              .run =
                  [lower](const Args& a) {
                    Outputs out;
                    for (int64_t k : {-1, 0, 2}) {
                      out.push_back(lower ? tril(a.t(0), k) : a.t(0).triu(k));
                    }
                    return out;
                  },
              .reference =
                  [lower](const Args& a, ScalarType) {
                    std::vector<double> x = host_values(a.t(0));
                    Outputs out;
                    for (int64_t k : {-1, 0, 2}) {
                      std::vector<double> v(x.size());
                      for (int64_t b = 0; b < 2; ++b) {
                        for (int64_t i = 0; i < 3; ++i) {
                          for (int64_t j = 0; j < 4; ++j) {
                            int64_t p = (b * 3 + i) * 4 + j;
                            bool keep = lower ? j - i <= k : j - i >= k;
                            v[p] = keep ? x[p] : 0;
                          }
                        }
                      }
                      out.push_back(values({2, 3, 4}, v, kDouble));
                    }
                    return out;
                  }});
  }

  // PyTorch's outputs
  add_golden("tril", "tril", [](const Args& a) { return Outputs{tril(a.t(0), a.i(0))}; });
  add_golden("triu", "triu", [](const Args& a) { return Outputs{triu(a.t(0), a.i(0))}; });
  add_golden("one_hot", "one_hot", [](const Args& a) { return Outputs{one_hot(a.t(0), a.i(0))}; });
  add_golden("gather", "gather",
             [](const Args& a) { return Outputs{gather(a.t(0), a.i(0), a.t(1))}; });
  add_golden("index_select", "index_select",
             [](const Args& a) { return Outputs{index_select(a.t(0), a.i(0), a.t(1))}; });
  add_golden("repeat", "repeat", [](const Args& a) { return Outputs{a.t(0).repeat(a.ints)}; });
  add_golden("index_add", "index_add",
             [](const Args& a) { return Outputs{index_add(a.t(0), a.i(0), a.t(1), a.t(2))}; });
  add_golden("scatter_add", "scatter_add",
             [](const Args& a) { return Outputs{scatter_add(a.t(0), a.i(0), a.t(1), a.t(2))}; });
  add_golden("cat", "cat", [](const Args& a) { return Outputs{cat(a.tensors, a.i(0))}; });
  add_golden("stack", "stack", [](const Args& a) { return Outputs{stack(a.tensors, a.i(0))}; });
}

}  // namespace conformance
