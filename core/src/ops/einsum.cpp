// einsum, lowered as PyTorch's is: each operand's repeated labels become diagonals, every operand
// is permuted into one common dimension order (output dims first, then the summed labels) with
// size-1 dims for the labels it lacks, and operands are multiplied left to right, each product
// one bmm (sum_product_pair) that sums the labels no later operand and no output needs.
#include "elementwise.h"

#include <array>
#include <string>

namespace kiln {
namespace {

constexpr int kLetters = 52;  // 'A'..'Z' are 0..25, 'a'..'z' 26..51 (PyTorch's order)

int label_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  return -1;
}

// One operand's subscripts: labels in order, and where "..." stands (-1: none).
struct Term {
  std::vector<int> labels;
  int ellipsis_at = -1;
};

Term parse_term(std::string_view s, std::string_view equation) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ') continue;
    if (c == '.') {
      KILN_CHECK_VALUE(t.ellipsis_at < 0 && s.substr(i, 3) == "...", "einsum(): invalid ",
                       "ellipsis in '", equation, "': use '...' once per operand");
      t.ellipsis_at = static_cast<int>(t.labels.size());
      i += 2;
      continue;
    }
    int l = label_of(c);
    KILN_CHECK_VALUE(l >= 0, "einsum(): invalid subscript given at index ", i, " in the equation '",
                     equation, "': subscripts must be in [a-zA-Z]");
    t.labels.push_back(l);
  }
  return t;
}

// The i-th dims of left and right (same rank) multiplied, summing `summed` dims; summed dims stay
// with size 1 so the result keeps the common order.
Tensor sum_product_pair(Tensor left, Tensor right, const std::vector<bool>& summed) {
  int64_t n = left.dim();
  DimVector both, lonly, ronly, sum_dims, size1;
  int64_t both_n = 1, l_n = 1, r_n = 1, s_n = 1;
  for (int64_t d = 0; d < n; ++d) {
    int64_t ls = left.sizes()[d], rs = right.sizes()[d];
    KILN_CHECK_VALUE(ls == rs || ls == 1 || rs == 1, "einsum(): operands do not broadcast with ",
                     "remapped shapes (original->remapped): ", left.sizes(), " and ",
                     right.sizes());
    if (summed[d]) {
      if (ls != 1 && rs != 1) {
        sum_dims.push_back(d);
        s_n *= ls;
        continue;
      }
      if (ls != 1) left = sum(left, {d}, true, left.dtype());
      if (rs != 1) right = sum(right, {d}, true, right.dtype());
      size1.push_back(d);
    } else if (ls != 1 && rs != 1) {
      both.push_back(d);
      both_n *= ls;
    } else if (ls != 1) {
      lonly.push_back(d);
      l_n *= ls;
    } else if (rs != 1) {
      ronly.push_back(d);
      r_n *= rs;
    } else {
      size1.push_back(d);
    }
  }
  auto join = [](std::initializer_list<const DimVector*> parts) {
    DimVector out;
    for (const DimVector* p : parts) {
      for (int64_t d : *p) out.push_back(d);
    }
    return out;
  };
  DimVector lperm = join({&both, &lonly, &sum_dims, &ronly, &size1});
  DimVector rperm = join({&both, &sum_dims, &ronly, &lonly, &size1});
  Tensor a = left.permute(lperm).reshape({both_n, l_n, s_n});
  Tensor b = right.permute(rperm).reshape({both_n, s_n, r_n});
  Tensor product = bmm(a, b);
  // back to [both, lonly, ronly, sum (1), size1 (1)] and then to the common order
  DimVector order = join({&both, &lonly, &ronly, &sum_dims, &size1});
  DimVector sizes;
  for (int64_t d : order) {
    bool one = std::find(sum_dims.begin(), sum_dims.end(), d) != sum_dims.end() ||
               std::find(size1.begin(), size1.end(), d) != size1.end();
    sizes.push_back(one ? 1 : std::max(left.sizes()[d], right.sizes()[d]));
  }
  DimVector inverse(n);
  for (int64_t i = 0; i < n; ++i) inverse[order[i]] = i;
  return product.reshape(sizes).permute(inverse);
}

}  // namespace

Tensor einsum(std::string_view equation, TensorList tensors) {
  size_t arrow = equation.find("->");
  std::string_view lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start), equation));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  KILN_CHECK_VALUE(terms.size() == tensors.size(),
                   "einsum(): ", terms.size() > tensors.size() ? "fewer" : "more",
                   " operands were provided than specified in the equation '", equation, "' (",
                   tensors.size(), " operands, ", terms.size(), " subscripts)");
  KILN_CHECK_VALUE(!tensors.empty(), "einsum(): must provide at least one operand");
  // the ellipsis covers the dims the labels leave; the widest one sets the broadcast rank
  int64_t ell_rank = 0;
  std::array<int, kLetters> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t labelled = static_cast<int64_t>(terms[i].labels.size());
    int64_t ndim = tensors[i].dim();
    bool fits = terms[i].ellipsis_at >= 0 ? ndim >= labelled : ndim == labelled;
    KILN_CHECK_VALUE(fits, "einsum(): the number of subscripts in the equation (", labelled,
                     ") does not match the number of dimensions (", ndim, ") for operand ", i,
                     terms[i].ellipsis_at >= 0 ? " and no ellipsis was given" : "", " (equation '",
                     equation, "')");
    if (terms[i].ellipsis_at >= 0) ell_rank = std::max(ell_rank, ndim - labelled);
    for (int l : terms[i].labels) ++count[l];
  }
  // output: as given, or the ellipsis then the labels seen once, in PyTorch's label order
  Term out;
  if (arrow != std::string_view::npos) {
    out = parse_term(equation.substr(arrow + 2), equation);
    std::array<bool, kLetters> seen{};
    for (int l : out.labels) {
      KILN_CHECK_VALUE(!seen[l], "einsum(): output subscript ", equation.substr(arrow + 2),
                       " appears more than once in the output");
      KILN_CHECK_VALUE(count[l] > 0, "einsum(): output subscript ",
                       static_cast<char>(l < 26 ? 'A' + l : 'a' + l - 26),
                       " does not appear in the equation for any input operand");
      seen[l] = true;
    }
  } else {
    out.ellipsis_at = 0;
    for (int l = 0; l < kLetters; ++l) {
      if (count[l] == 1) out.labels.push_back(l);
    }
  }
  // the common order: output dims (with the ellipsis where the output has it), then the others
  std::array<int64_t, kLetters> position;
  position.fill(-1);
  int64_t next = 0, ell_start = -1;
  for (size_t i = 0; i <= out.labels.size(); ++i) {
    if (out.ellipsis_at == static_cast<int>(i)) {
      ell_start = next;
      next += ell_rank;
    }
    if (i < out.labels.size()) position[out.labels[i]] = next++;
  }
  int64_t out_rank = next;
  if (ell_start < 0) {  // an ellipsis absent from the output is summed
    ell_start = next;
    next += ell_rank;
  }
  for (int l = 0; l < kLetters; ++l) {
    if (count[l] > 0 && position[l] < 0) position[l] = next++;
  }
  int64_t rank = next;
  // each operand: diagonals for repeated labels, then permuted and padded to the common order
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  std::vector<Tensor> ops;
  std::vector<std::vector<bool>> has(tensors.size(), std::vector<bool>(rank, false));
  for (size_t i = 0; i < terms.size(); ++i) {
    Tensor t = tensors[i].to(dtype);
    const Term& term = terms[i];
    int64_t e = term.ellipsis_at >= 0 ? t.dim() - static_cast<int64_t>(term.labels.size()) : 0;
    std::vector<int64_t> target;  // common position of each dim of t
    for (int64_t j = 0; j < static_cast<int64_t>(term.labels.size()); ++j) {
      if (j == term.ellipsis_at) {
        for (int64_t k = 0; k < e; ++k) target.push_back(ell_start + ell_rank - e + k);
      }
      target.push_back(position[term.labels[j]]);
    }
    if (term.ellipsis_at == static_cast<int>(term.labels.size())) {
      for (int64_t k = 0; k < e; ++k) target.push_back(ell_start + ell_rank - e + k);
    }
    for (int64_t a = 0; a < t.dim(); ++a) {  // a label repeated: keep its diagonal
      for (int64_t b = a + 1; b < t.dim(); ++b) {
        if (target[a] != target[b]) continue;
        KILN_CHECK_VALUE(t.sizes()[a] == t.sizes()[b], "einsum(): subscript ",
                         " is repeated for operand ", i, " but the sizes don't match, ",
                         t.sizes()[a], " != ", t.sizes()[b]);
        t = movedim(diagonal(t, 0, a, b), -1, a);
        target.erase(target.begin() + b);
        --b;
      }
    }
    DimVector perm, sizes(rank, 1);
    for (int64_t p = 0; p < rank; ++p) {
      for (int64_t a = 0; a < t.dim(); ++a) {
        if (target[a] == p) {
          perm.push_back(a);
          sizes[p] = t.sizes()[a];
          has[i][p] = true;
        }
      }
    }
    ops.push_back(t.permute(perm).reshape(sizes));
  }
  // multiply left to right, summing each dim as soon as no later operand has it
  auto needed_after = [&](size_t i, int64_t p) {
    if (p < out_rank) return true;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      if (has[j][p]) return true;
    }
    return false;
  };
  Tensor result = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::vector<bool> summed(rank);
    for (int64_t p = 0; p < rank; ++p) summed[p] = !needed_after(i, p);
    result = sum_product_pair(result, ops[i], summed);
  }
  // what the output keeps; the rest is summed (one operand's labels, an unused ellipsis)
  if (rank > out_rank) {
    DimVector rest;
    for (int64_t p = out_rank; p < rank; ++p) rest.push_back(p);
    result = sum(result, rest, false, dtype);
  }
  // size-1 placeholders of the output become the broadcast size of the operands
  DimVector out_sizes;
  for (int64_t p = 0; p < out_rank; ++p) {
    int64_t s = 1;
    for (const Tensor& t : ops) s = std::max(s, t.sizes()[p]);
    out_sizes.push_back(s);
  }
  return result.expand(out_sizes);
}

}  // namespace kiln
