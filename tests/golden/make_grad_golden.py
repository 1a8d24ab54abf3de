#!/usr/bin/python3
"""Writes grad_cases.txt: forward results and input gradients of kiln's differentiable operators,
computed by PyTorch 1.13 in float32, for tests/autograd/test_grad_golden.cpp. Run with a Python
that has torch (Debian's python3-torch):

    /usr/bin/python3 tests/golden/make_grad_golden.py

Each operator below has a function (the C++ test has the same one under the same name) and a
list of input shapes, many of them broadcasting against each other; every (operator, shapes)
pair is a case. Inputs are float32 uniform in [-1, 1) (or [0.5, 1.5) for positive operators),
all requiring grad; integer arguments (indices, class targets) are fixed formulas of the shapes
that both sides compute. The gradient flowing in is a random tensor of the output's shape.

Records, one per line:

    case <op> <input count>
    in <ndim> <sizes...> <values...>      an input (float32 values)
    gout <ndim> <sizes...> <values...>    the gradient of the output
    out <ndim> <sizes...> <values...>     PyTorch's output
    grad <i> <values...>                  PyTorch's gradient of input i (its shape)
    grad <i> none                         input i gets no gradient
    end

Values: Python's repr of the float64 of each float32 value.
"""
import os

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def index_rows(n, count):
    """[0, 2, 4, ...] mod n, `count` of them (repeats accumulate in the gradient)."""
    return torch.tensor([(2 * i) % n for i in range(count)], dtype=torch.int64)


def gather_index(shape):
    """For dim 1: index[i][j] = (i + 2j) mod shape[1], 3 columns."""
    return torch.tensor([[(i + 2 * j) % shape[1] for j in range(3)] for i in range(shape[0])],
                        dtype=torch.int64)


def class_targets(n, c):
    return torch.tensor([(3 * i + 1) % c for i in range(n)], dtype=torch.int64)


def inplace_row_mul(x):
    b = x[0] * 1
    b[1].mul_(x[1])
    return b


def inplace_narrow_copy(x):
    b = x[0] * 2
    b.narrow(1, 0, 2).copy_(x[1])
    return b * x[0]


def inplace_view_chain(x):
    b = torch.tanh(x[0]) * 3
    v = b[0]
    v.narrow(0, 1, 2).add_(x[1], alpha=2)
    v.sigmoid_()
    return b


def inplace_transposed_view(x):
    b = x[0] * 1
    b.t()[1].mul_(x[1])
    return b


def inplace_strided_view_used(x):
    b = x[0] * 1
    v = b[:, 1::2]
    v.mul_(x[1])
    return v.sum(0) * 2 + b.sum()


def inplace_stale_views(x):
    b = x[0] * 1
    v1 = b[0]
    v2 = b[:, 0]
    v1.mul_(x[1])
    b.add_(1)
    return v2 * v2


def inplace_fill(x):
    y = x[0] * 1
    y.fill_(2.5)
    return y * x[0]


def inplace_zero(x):
    y = x[0] * 3
    y.zero_()
    return y + x[0] * x[0]


def inplace_fill_row(x):
    b = x[0] * 2
    b[1].fill_(0.5)
    return b * x[1]


def inplace_index_put_scalar(x):
    b = x[0] * 2
    b[0, 1:3] = 1.5
    return b * x[0]


def inplace_masked_fill(x):
    b = x[0] * 2
    b.masked_fill_(x[0].detach() > 0, 0.25)
    return b * x[1]


def inplace_residual_relu(x):
    y = x[0] * 2
    y.add_(x[1])
    y.relu_()
    return y * 3


def inplace_sub_alpha_sigmoid(x):
    y = x[0] * 1
    y.sub_(x[1], alpha=0.5)
    y.sigmoid_()
    return y * x[1]


def inplace_div_tanh(x):
    y = x[0] * 1
    y.div_(x[1] + 2)
    y.tanh_()
    return y * y


def batch_gather_vec(tensor, indices):
    """The vectorized batch gather of "Effective PyTorch" (without .cuda()); C++ ports it as
    written."""
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(torch.arange(shape[0]) * shape[1],
                           [shape[0]] + [1] * (len(indices.shape) - 1))
    output = flat_first[indices + offset]
    return output


def batch_indices(shape):
    """[B, K] indices into dim 1 (size N): (3b + 2k) mod N, 3 per row (repeats included)."""
    return torch.tensor([[(3 * b + 2 * k) % shape[1] for k in range(3)] for b in range(shape[0])],
                        dtype=torch.int64)


def index_put_accumulate(x):
    b = x[0] * 1
    b.index_put_((index_rows(x[0].shape[0], x[1].shape[0]),), x[1], accumulate=True)
    return b * x[0]


def index_put_rows(x):
    b = x[0] * 2
    b.index_put_((index_rows(x[0].shape[0], x[1].shape[0]),), x[1])
    return b * x[0]


def index_put_mask_scalar(x):
    b = x[0] * 2
    b[x[0].detach() > 0] = 0.5
    return b * x[0]


def index_put_slice_tensor(x):
    b = x[0] * 1
    b[:, index_rows(x[0].shape[1], 2)] = x[1]
    return b * x[0]


def inplace_fill_then_mul(x):
    y = x[0] * 1
    y.fill_(2)
    y.mul_(x[1])
    return y * x[0]


U = [[()], [(5,)], [(3, 4)], [(2, 3, 4)]]
B = [[(3, 4), (3, 4)], [(3, 4), (4,)], [(3, 1), (1, 4)], [(2, 3, 4), (3, 1)], [(), (3, 4)],
     [(2, 1, 4), ()]]
R = [[(2, 3, 4)], [(3, 4, 5)]]

# name: (function of the input list, shapes, inputs positive)
OPS = {
    # unary
    "neg": (lambda x: -x[0], U, False),
    "abs": (lambda x: torch.abs(x[0]), U, False),
    "exp": (lambda x: torch.exp(x[0]), U, False),
    "log": (lambda x: torch.log(x[0]), U, True),
    "log1p": (lambda x: torch.log1p(x[0]), U, True),
    "expm1": (lambda x: torch.expm1(x[0]), U, False),
    "sqrt": (lambda x: torch.sqrt(x[0]), U, True),
    "rsqrt": (lambda x: torch.rsqrt(x[0]), U, True),
    "sin": (lambda x: torch.sin(x[0]), U, False),
    "cos": (lambda x: torch.cos(x[0]), U, False),
    "tanh": (lambda x: torch.tanh(x[0]), U, False),
    "sigmoid": (lambda x: torch.sigmoid(x[0]), U, False),
    "relu": (lambda x: torch.relu(x[0]), U, False),
    "square": (lambda x: torch.square(x[0]), U, False),
    "pow_3": (lambda x: torch.pow(x[0], 3), U, False),
    "pow_2_5": (lambda x: torch.pow(x[0], 2.5), U, True),
    "scalar_pow": (lambda x: torch.pow(2.0, x[0]), U, False),
    "clamp": (lambda x: torch.clamp(x[0], -0.5, 0.5), U, False),
    "clamp_min": (lambda x: torch.clamp_min(x[0], 0.1), U, False),
    "clamp_max": (lambda x: torch.clamp_max(x[0], 0.2), U, False),
    "add_scalar": (lambda x: x[0] + 1.5, U, False),
    "mul_scalar": (lambda x: x[0] * 2.5, U, False),
    "div_scalar": (lambda x: x[0] / 3.0, U, False),
    "rsub_scalar": (lambda x: 2.0 - x[0], U, False),
    "remainder_scalar": (lambda x: torch.remainder(x[0] * 3, 1.7), U, False),
    "fmod_scalar": (lambda x: torch.fmod(x[0] * 3, 1.7), U, False),
    "masked_fill": (lambda x: x[0].masked_fill(x[0] > 0.5, 1.0), U, False),
    "where_scalar": (lambda x: torch.where(x[0] > 0, x[0], torch.tensor(0.25)), U, False),
    "clone": (lambda x: x[0].clone(), U, False),
    "to_double": (lambda x: x[0].to(torch.float64) * 3, U, False),
    # binary, broadcasting
    "add_alpha": (lambda x: torch.add(x[0], x[1], alpha=2.5), B, False),
    "sub_alpha": (lambda x: torch.sub(x[0], x[1], alpha=0.5), B, False),
    "mul": (lambda x: x[0] * x[1], B, False),
    "div": (lambda x: x[0] / x[1], B, True),
    "pow": (lambda x: torch.pow(x[0], x[1]), B, True),
    "maximum": (lambda x: torch.maximum(x[0], x[1]), B, False),
    "minimum": (lambda x: torch.minimum(x[0], x[1]), B, False),
    "where": (lambda x: torch.where(x[0] > 0, x[0], x[1] * 2), B, False),
    "mul_add_chain": (lambda x: (x[0] * x[1] + x[1]).tanh() * x[0], B, False),
    # reductions
    "sum_all": (lambda x: x[0].sum(), R + [[(5,)]], False),
    "sum_02": (lambda x: x[0].sum((0, 2)), R, False),
    "sum_1_keepdim": (lambda x: x[0].sum(1, keepdim=True), R, False),
    "mean_all": (lambda x: x[0].mean(), R + [[(5,)]], False),
    "mean_1": (lambda x: x[0].mean(1), R, False),
    "prod_all": (lambda x: x[0].prod(), [[(2, 3)], [(4,)]], True),
    "prod_1": (lambda x: x[0].prod(1), R, True),
    "amax_1": (lambda x: torch.amax(x[0], 1), R, False),
    "amin_02_keepdim": (lambda x: torch.amin(x[0], (0, 2), keepdim=True), R, False),
    "max_all": (lambda x: torch.max(x[0]), R, False),
    "min_all": (lambda x: torch.min(x[0]), R, False),
    "max_dim1": (lambda x: torch.max(x[0], 1)[0], R, False),
    "min_dim0_keepdim": (lambda x: torch.min(x[0], 0, keepdim=True)[0], R, False),
    "logsumexp_2": (lambda x: torch.logsumexp(x[0], 2), R, False),
    "var_1": (lambda x: torch.var(x[0], 1), R, False),
    "var_all": (lambda x: torch.var(x[0]), R, False),
    "std_1": (lambda x: torch.std(x[0], 1), R, False),
    "norm_all": (lambda x: torch.norm(x[0]), R, False),
    "norm_dim1": (lambda x: torch.norm(x[0], 2, 1), R, False),
    "softmax_last": (lambda x: F.softmax(x[0], -1), R + [[(3, 4)]], False),
    "log_softmax_1": (lambda x: F.log_softmax(x[0], 1), R + [[(3, 4)]], False),
    # linear algebra
    "mm": (lambda x: torch.mm(x[0], x[1]), [[(2, 3), (3, 4)], [(5, 7), (7, 3)]], False),
    "bmm": (lambda x: torch.bmm(x[0], x[1]), [[(2, 2, 3), (2, 3, 2)], [(3, 4, 5), (3, 5, 2)]],
            False),
    "matmul": (lambda x: torch.matmul(x[0], x[1]),
               [[(4,), (4,)], [(3, 4), (4,)], [(4,), (4, 3)], [(2, 1, 2, 3), (3, 3, 2)],
                [(2, 3, 4), (4, 5)], [(4,), (2, 4, 3)], [(3, 4), (2, 4, 2)]], False),
    "addmm": (lambda x: torch.addmm(x[0], x[1], x[2], beta=0.5, alpha=2.0),
              [[(4,), (2, 3), (3, 4)], [(2, 4), (2, 3), (3, 4)], [(1, 4), (2, 3), (3, 4)]],
              False),
    "dot": (lambda x: torch.dot(x[0], x[1]), [[(5,), (5,)]], False),
    "linear": (lambda x: F.linear(x[0], x[1], x[2]),
               [[(5, 3), (4, 3), (4,)], [(2, 5, 3), (4, 3), (4,)], [(3,), (2, 3), (2,)]], False),
    "linear_nobias": (lambda x: F.linear(x[0], x[1]), [[(5, 3), (4, 3)]], False),
    # views and copies
    "flatten_reshape": (lambda x: x[0].reshape(-1).reshape(2, -1), [[(2, 3)], [(2, 3, 4)]], False),
    "transpose_01": (lambda x: x[0].transpose(0, 1), [[(2, 3)], [(2, 3, 4)]], False),
    "permute_201": (lambda x: x[0].permute(2, 0, 1), [[(2, 3, 4)]], False),
    "t_contiguous": (lambda x: x[0].t().contiguous() * 2, [[(2, 3)], [(4, 1)]], False),
    "expand": (lambda x: x[0].expand(2, 3, 4), [[(3, 1)], [(1, 4)], [(4,)], [(1, 1, 1)]], False),
    "select_narrow": (lambda x: x[0].select(0, 1).narrow(0, 1, 3), [[(4, 5)], [(3, 4, 2)]],
                      False),
    "slice_step": (lambda x: x[0][:, 0::2], [[(4, 5)], [(2, 6, 3)]], False),
    "index_slice_int": (lambda x: x[0][1:, 2], [[(3, 4)], [(4, 5, 2)]], False),
    "squeeze_unsqueeze": (lambda x: x[0].squeeze().unsqueeze(0) * 2, [[(2, 1, 3)], [(1, 3, 1)]],
                          False),
    "cat_0": (lambda x: torch.cat([x[0], x[1]], 0), [[(2, 3), (1, 3)], [(4, 3), (4, 3)]], False),
    "cat_1": (lambda x: torch.cat([x[0], x[1], x[0]], 1), [[(2, 3), (2, 1)]], False),
    "stack_1": (lambda x: torch.stack([x[0], x[1]], 1), [[(2, 3), (2, 3)], [(4,), (4,)]], False),
    "repeat": (lambda x: x[0].repeat(2, 1, 2), [[(2, 3)], [(3,)]], False),
    "tril": (lambda x: torch.tril(x[0]), [[(3, 3)], [(4, 5)]], False),
    "triu_1": (lambda x: torch.triu(x[0], 1), [[(3, 3)], [(4, 5)]], False),
    "index_select": (lambda x: x[0].index_select(0, index_rows(x[0].shape[0], 4)),
                     [[(3, 4)], [(4, 2, 3)]], False),
    "gather_1": (lambda x: x[0].gather(1, gather_index(x[0].shape)), [[(3, 4)], [(2, 5)]], False),
    # nn
    "conv2d": (lambda x: F.conv2d(x[0], x[1], x[2], padding=1),
               [[(2, 3, 5, 5), (4, 3, 3, 3), (4,)]], False),
    "conv2d_stride2": (lambda x: F.conv2d(x[0], x[1], x[2], stride=2),
                       [[(1, 2, 7, 7), (4, 2, 3, 3), (4,)]], False),
    "conv2d_groups": (lambda x: F.conv2d(x[0], x[1], x[2], padding=1, groups=2),
                      [[(1, 4, 5, 5), (4, 2, 3, 3), (4,)]], False),
    "conv2d_dilation": (lambda x: F.conv2d(x[0], x[1], dilation=2), [[(1, 2, 7, 7), (3, 2, 3, 3)]],
                        False),
    "layer_norm": (lambda x: F.layer_norm(x[0], (4,), x[1], x[2]), [[(3, 4), (4,), (4,)],
                                                                    [(2, 3, 4), (4,), (4,)]],
                   False),
    "batch_norm_train": (lambda x: F.batch_norm(x[0], torch.zeros(3), torch.ones(3), x[1], x[2],
                                                training=True),
                         [[(4, 3, 2, 2), (3,), (3,)], [(5, 3), (3,), (3,)]], False),
    "embedding": (lambda x: F.embedding(torch.tensor([[1, 3, 3], [0, 9, 2]]), x[0]),
                  [[(10, 3)]], False),
    "mse_loss": (lambda x: F.mse_loss(x[0], x[1]), [[(3, 4), (3, 4)], [(5,), (5,)]], False),
    "mse_loss_sum": (lambda x: F.mse_loss(x[0], x[1], reduction="sum"), [[(3, 4), (3, 4)]],
                     False),
    "cross_entropy": (lambda x: F.cross_entropy(x[0], class_targets(x[0].shape[0],
                                                                    x[0].shape[1])),
                      [[(4, 5)], [(7, 3)]], False),
    "cross_entropy_probs": (lambda x: F.cross_entropy(x[0], F.softmax(x[1], 1)),
                            [[(4, 5), (4, 5)]], False),
    "nll_loss": (lambda x: F.nll_loss(F.log_softmax(x[0], 1), class_targets(x[0].shape[0],
                                                                            x[0].shape[1])),
                 [[(4, 5)]], False),
    "binary_cross_entropy": (lambda x: F.binary_cross_entropy(torch.sigmoid(x[0]),
                                                              torch.sigmoid(x[1]).detach()),
                             [[(3, 4), (3, 4)]], False),
    "bce_with_logits": (lambda x: F.binary_cross_entropy_with_logits(x[0], torch.sigmoid(x[1])),
                        [[(3, 4), (3, 4)], [(6,), (6,)]], False),
    # in-place operations on views of tensors that require grad (CopySlices)
    "inplace_row_mul": (inplace_row_mul, [[(3, 4), (4,)], [(3, 4), (1,)]], False),
    "inplace_narrow_copy": (inplace_narrow_copy, [[(3, 4), (3, 2)], [(3, 4), (2,)]], False),
    "inplace_view_chain": (inplace_view_chain, [[(3, 4), (2,)]], False),
    "inplace_transposed_view": (inplace_transposed_view, [[(3, 4), (3,)]], False),
    "inplace_strided_view_used": (inplace_strided_view_used, [[(3, 4), (3, 2)], [(2, 6), (3,)]],
                                  False),
    "inplace_stale_views": (inplace_stale_views, [[(3, 4), (4,)], [(2, 3), (1,)]], False),
    # softplus: the smooth branch, and with beta 4 and threshold 2 both branches (x > 0.5)
    "softplus": (lambda x: F.softplus(x[0]), U, False),
    "softplus_beta4_threshold2": (lambda x: F.softplus(x[0], 4, 2), [[(5,)], [(3, 4)]], False),
    # in-place fills rebase the history: the old value gets a zero gradient (FillBackward0)
    "inplace_fill": (inplace_fill, [[(3, 4)]], False),
    "inplace_zero": (inplace_zero, [[(3, 4)]], False),
    "inplace_fill_row": (inplace_fill_row, [[(3, 4), (4,)]], False),
    "inplace_index_put_scalar": (inplace_index_put_scalar, [[(3, 4)]], False),
    "inplace_masked_fill": (inplace_masked_fill, [[(3, 4), (4,)]], False),
    "inplace_fill_then_mul": (inplace_fill_then_mul, [[(3, 4), (3, 4)]], False),
    # advanced indexing (index tensors are index_rows of the indexed size; masks come from the
    # input's signs)
    "index_tensor": (lambda x: x[0][index_rows(x[0].shape[0], 5)], [[(4, 3)], [(3,)]], False),
    "index_slice_tensor": (lambda x: x[0][:, index_rows(x[0].shape[1], 5)],
                           [[(3, 4)], [(2, 3, 4)]], False),
    "index_separated": (lambda x: x[0][index_rows(2, 3), :, index_rows(4, 3)], [[(2, 3, 4)]],
                        False),
    "index_adjacent_broadcast": (lambda x: x[0][:, index_rows(3, 2).view(2, 1),
                                                index_rows(4, 3).view(1, 3)],
                                 [[(2, 3, 4)]], False),
    "index_none_ellipsis": (lambda x: x[0][None, ..., index_rows(x[0].shape[-1], 5)],
                            [[(2, 3, 4)], [(4,)]], False),
    "index_mask": (lambda x: x[0][x[0].detach() > 0], [[(3, 4)], [(2, 3, 4)]], False),
    "index_mask_rows": (lambda x: x[0][x[0].detach()[:, 0] > 0], [[(5, 3)]], False),
    "batch_gather_vec": (lambda x: batch_gather_vec(x[0], batch_indices(x[0].shape)),
                         [[(2, 5)], [(3, 4, 2)]], False),
    "index_put_accumulate": (index_put_accumulate, [[(5, 3), (7, 3)], [(5,), (7,)]], False),
    "index_put_rows": (index_put_rows, [[(5, 3), (3, 3)], [(5, 3), (3, 1)]], False),
    "index_put_mask_scalar": (index_put_mask_scalar, [[(3, 4)]], False),
    "index_put_slice_tensor": (index_put_slice_tensor, [[(3, 4), (3, 2)], [(3, 4), (2,)]],
                               False),
    # in-place arithmetic on non-leaves: run in place when the formula allows (add_, sub_,
    # relu_, sigmoid_, tanh_), on a copy otherwise (div_)
    "inplace_residual_relu": (inplace_residual_relu, [[(3, 4), (3, 4)], [(2, 3, 4), (4,)]],
                              False),
    "inplace_sub_alpha_sigmoid": (inplace_sub_alpha_sigmoid, [[(3, 4), (4,)]], False),
    "inplace_div_tanh": (inplace_div_tanh, [[(3, 4), (3, 1)]], False),
}


def fmt(t):
    return " ".join(repr(v) for v in t.detach().double().reshape(-1).tolist())


def shaped(t):
    return " ".join([str(t.dim())] + [str(s) for s in t.shape] + [fmt(t)])


def main():
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(20261122)
    lines = ["# PyTorch %s forward results and input gradients; written by make_grad_golden.py "
             "(see its docstring for the format)" % torch.__version__]
    count = 0
    for name, (fn, shape_sets, positive) in OPS.items():
        for shapes in shape_sets:
            inputs = []
            for shape in shapes:
                t = torch.rand(shape, generator=gen)
                t = t + 0.5 if positive else t * 2 - 1
                inputs.append(t.requires_grad_())
            out = fn(inputs)
            gout = torch.rand(out.shape, generator=gen, dtype=out.dtype) * 2 - 1
            grads = torch.autograd.grad(out, inputs, gout, allow_unused=True)
            lines.append("case %s %d" % (name, len(inputs)))
            lines += ["in " + shaped(t) for t in inputs]
            lines.append("gout " + shaped(gout))
            lines.append("out " + shaped(out))
            for i, g in enumerate(grads):
                lines.append("grad %d %s" % (i, "none" if g is None else fmt(g)))
            lines.append("end")
            count += 1
    with open(os.path.join(HERE, "grad_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases of %d operators" % (count, len(OPS)))


if __name__ == "__main__":
    main()
