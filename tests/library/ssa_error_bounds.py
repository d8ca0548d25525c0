r"""Error bounds of SSA attention in floating point, for the tests that compare the fast paths with the truth.

A test computes SSA attention in float32 (or float64) on one of the paths and compares it,
output and gradients, with the same function evaluated in float64 on the same inputs: the
"truth", whose own rounding (about 1e-16) is negligible against float32's. For a float64 run
the bound is that of float64 (``u = 2**-53``), and the truth's own error is of the same order:
the bounds' ``SLACK`` covers it. The tolerance of each entry is a
first-order bound on the float32 path's error, computed from float64 magnitudes of the same
problem, so that it holds on every CPU, whatever order its BLAS and vector units sum in.

The model (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3): each operation
rounds with relative error at most ``u`` (``2**-24`` in float32); glibc's ``expf``/``logf``, PyTorch's and
SLEEF's ``u10`` functions (those of the vectorised tile kernels) are within one ulp, ``2u``; a sum or dot product of ``m`` terms, in any order, errs by at most
``gamma(m) = m u / (1 - m u)`` times the sum of the terms' magnitudes. Sums that the paths
accumulate in double (the C++ row sums, the scalar gradients) err by far less and are counted
with ``gamma`` of float32 all the same. Writing ``x = scale q.k``, ``y = b x``,
``l = sgn(y) log(1 + |y|)``, ``s = n l``, ``w = softmax(s)`` over visible keys, with the
absolute errors (``D``: head dimension, ``K``: keys, ``X = scale |q|.|k|``):

* ``dx = gamma(D + 2) X`` (the dot product and the two products by ``scale`` and ``b``);
  ``dy = b dx + 2u |y|``;
* the score: ``sigma = n dy / (1 + |y|) + u (n + 3 |s|)`` (``1 + |y|`` rounds, ``log`` is within
  2u relative, the product by ``n`` rounds);
* a weight's relative error, to first order ``ds_j - sum_k w_k ds_k``, at most
  ``rho = sigma_j + max_k sigma_k + u (8 S + 2K + 16)``, where ``S`` bounds the row's shift
  (``exp(s - m)``: the subtraction rounds by ``u |s - m| <= 2u S``; the backward recomputes
  ``exp(s - L)`` with the log-sum-exp ``L``), and ``2K`` covers the normalising sum;
* a weight's absolute error ``w rho + TINY``: below float32's normal range (``2**-126``) a
  weight keeps only an absolute precision, and weights below ``2**-150`` become 0;
* the output ``O = w v``: ``sum_j (w_j rho_j + TINY + w_j gamma(K + 2)) |v_j|``;
* the softmax backward ``g = w (dw - delta)``, ``dw = dO.v`` (``D`` terms), ``delta = <w, dw>``
  (or ``<dO, O>`` on the blockwise path; both are counted):
  ``dg = (w rho + TINY + 2u w) |dw - delta| + w (d(dw) + d(delta))``;
* ``dL/dy = n g / (1 + |y|)``: ``n / (1 + |y|) (dg + |g| (dy / (1 + |y|) + 4u))``; the matrix
  gradients are products of it with ``k``, ``q`` (``K`` or ``Q`` more terms) or of ``w`` with
  ``dO``;
* ``dL/dn = sum g l``: ``sum (dg |l| + |g| sigma / n + 2u |g l|)``;
* ``dL/db``, as the fast paths compute it, ``(1 / b) sum q . dq`` (``dq`` the query gradient):
  ``(1 / b) sum |q| (d(dq) + 2u |dq|)``; as autograd computes it on the reference path,
  ``sum g n x / (1 + b|x|)``: ``sum dg |ds/db| + |g| n dx (2 / (1 + b|x|)) + gamma(N) |g ds/db|``
  (a float32 sum of ``N`` terms).

The scalar gradients are where the bound matters: their terms cancel (``sum_j g_j = 0`` in
each row), so an error of the order of the terms is large against the result. The bound is
first order; the factor ``SLACK`` covers the second-order terms, which are below ``1e-5`` of
the first-order ones at the sizes tested.
"""

from __future__ import annotations

import torch

SLACK = 2.0


def ssa_truth_and_bounds(q, k, v, b, n, *, scale=None, mask=None, causal=False, grad_output, b_gradient="q.dq"):
    """``(truth, bound)``: two dicts with ``output, q, k, v, b, n`` (the gradients of
    ``<output, grad_output>``), the float64 truth and the error bound of each entry in the
    dtype of ``q`` (float32 or float64).

    ``q`` ``(B, H, Q, D)``, ``k``/``v`` ``(B, H_kv, K, D)``, ``b``/``n`` shape ``()`` or ``(H,)``
    (the values, not raw parameters), ``mask`` boolean broadcastable to ``(B, H, Q, K)``, queries
    aligned to the last keys when ``causal``. ``b_gradient``: ``"q.dq"`` (the direct and
    blockwise paths) or ``"autograd"`` (the reference path)."""
    from ssa.scoring import ssa

    unit_roundoff = torch.finfo(q.dtype).eps / 2  # u: 2**-24 in float32, 2**-53 in float64
    U, TINY = unit_roundoff, torch.finfo(q.dtype).tiny

    def gamma(terms: int) -> float:
        return terms * U / (1 - terms * U)

    f64 = [t.detach().double().requires_grad_() for t in (q, k, v, b, n)]
    q64, k64, v64, b64, n64 = f64
    batch, heads, n_queries, dim = q.shape
    n_keys, group = k.shape[-2], heads // k.shape[1]
    scale = dim**-0.5 if scale is None else scale

    def per_head(value):  # () or (H,) -> (H, 1, 1)
        return value.expand(heads).reshape(heads, 1, 1)

    def expand(tensor):  # (B, H_kv, K, D) -> (B, H, K, D)
        return tensor.repeat_interleave(group, dim=1)

    visible = torch.ones(n_queries, n_keys, dtype=torch.bool)
    if causal:
        visible = torch.arange(n_keys)[None, :] <= torch.arange(n_queries)[:, None] + (n_keys - n_queries)
    if mask is not None:
        visible = visible & mask
    visible = visible.expand(batch, heads, n_queries, n_keys)

    x = (q64 @ expand(k64).transpose(-2, -1)) * scale
    weights = ssa(x, per_head(b64), per_head(n64), mask=visible)
    output = weights @ expand(v64)
    dO = grad_output.detach().double()
    grads = torch.autograd.grad(output, f64, dO)
    truth = dict(zip(["output", "q", "k", "v", "b", "n"], [output.detach(), *grads]))

    with torch.no_grad():
        bh, nh = per_head(b64), per_head(n64)
        qe, ke, ve = q64, expand(k64), expand(v64)
        w = weights.detach()
        has_keys = visible.any(-1, keepdim=True)
        magnitude_x = scale * (qe.abs() @ ke.abs().transpose(-2, -1))  # X
        y = bh * x.detach()
        ell = torch.copysign(torch.log1p(y.abs()), y)
        s = nh * ell
        dx = gamma(dim + 2) * magnitude_x
        dy = bh * dx + 2 * U * y.abs()
        sigma = (nh * dy / (1 + y.abs()) + U * (nh + 3 * s.abs())).masked_fill(~visible, 0.0)
        # The largest shift a path may use: the row's largest |score|, or the blockwise path's
        # Cauchy-Schwarz bound n log(1 + b scale |q_i| max_j |k_j|).
        key_norm_max = ke.norm(dim=-1).amax(-1)[..., None, None]
        shift = torch.maximum(
            s.abs().masked_fill(~visible, 0.0).amax(-1, keepdim=True),
            nh * torch.log1p(bh * scale * qe.norm(dim=-1, keepdim=True) * key_norm_max),
        )
        rho = sigma + sigma.amax(-1, keepdim=True) + U * (8 * shift + 2 * n_keys + 16)
        rho = rho.masked_fill(~visible, 0.0)
        # A weight's absolute error: relative, plus float32's underflow (weights below its normal
        # range, exp(s - m) < 2**-126, keep at most an absolute precision of TINY).
        d_w = w * rho + TINY * visible

        bound_output = (d_w + w * gamma(n_keys + 2)) @ ve.abs()

        dw = dO @ ve.transpose(-2, -1)
        d_dw = gamma(dim) * (dO.abs() @ ve.abs().transpose(-2, -1))
        delta = (w * dw).sum(-1, keepdim=True)
        d_delta = (
            (dw.abs() * d_w + w * d_dw).sum(-1, keepdim=True)
            + gamma(n_keys) * (w * dw.abs()).sum(-1, keepdim=True)
            + gamma(dim) * (dO.abs() * output.detach().abs()).sum(-1, keepdim=True)
            + (dO.abs() * bound_output).sum(-1, keepdim=True)
        )
        g = w * (dw - delta)
        dg = (d_w + 2 * U * w) * (dw - delta).abs() + w * (d_dw + d_delta)
        chain = nh / (1 + y.abs())  # d s / d y
        gy = g * chain
        d_gy = chain * (dg + g.abs() * (dy / (1 + y.abs()) + 4 * U))

        factor = bh * scale  # dL/d(q.k) = b scale dL/dy
        dq = factor * (gy @ ke)
        bound_dq = factor * ((d_gy + gamma(n_keys + 3) * gy.abs()) @ ke.abs())
        bound_dk = factor * ((d_gy + gamma(n_queries + 3) * gy.abs()).transpose(-2, -1) @ qe.abs())
        bound_dv = (d_w + w * gamma(n_queries + 1)).transpose(-2, -1) @ dO.abs()

        def to_kv_heads(bound, magnitude):  # the group's sum: its bounds, and its own rounding
            shape = (batch, heads // group, group, *bound.shape[-2:])
            return bound.reshape(shape).sum(2) + gamma(group) * magnitude.reshape(shape).sum(2)

        magnitude_dk = factor * (gy.abs().transpose(-2, -1) @ qe.abs())
        magnitude_dv = w.transpose(-2, -1) @ dO.abs()

        def to_parameter(per_item_head, parameter):  # (B, H, ...) summed to () or (H,)
            per_head_total = per_item_head.reshape(batch, heads, -1).sum((0, 2))
            return per_head_total.sum() if parameter.dim() == 0 else per_head_total.reshape(parameter.shape)

        bound_n = to_parameter(dg * ell.abs() + g.abs() * sigma / nh + 2 * U * (g * ell).abs(), n)
        if b_gradient == "q.dq":
            bound_b = to_parameter((qe.abs() * (bound_dq + 2 * U * dq.abs())) / bh, b)
        elif b_gradient == "autograd":
            ds_db = nh * x.detach() / (1 + y.abs())
            terms = (
                dg * ds_db.abs()
                + g.abs() * nh * dx * 2 / (1 + y.abs())
                + gamma(batch * heads * n_queries * n_keys) * (g * ds_db).abs()
            )
            bound_b = to_parameter(terms, b)
        else:
            raise ValueError(f"b_gradient must be 'q.dq' or 'autograd', got {b_gradient!r}")
        final_rounding = {name: U * truth[name].abs() for name in ("b", "n")}
        bound = {
            "output": bound_output * has_keys,
            "q": bound_dq,
            "k": to_kv_heads(bound_dk, magnitude_dk),
            "v": to_kv_heads(bound_dv, magnitude_dv),
            "b": bound_b + final_rounding["b"],
            "n": bound_n + final_rounding["n"],
        }
    return truth, {name: SLACK * value for name, value in bound.items()}


def assert_within_bounds(got: dict, truth: dict, bound: dict, label: str = ""):
    """Every entry of ``got`` within its bound of the float64 truth, with no NaN."""
    for name, value in got.items():
        value = value.detach().double()
        assert torch.isfinite(value).all(), f"{label} d{name}: not finite"
        error = (value - truth[name]).abs()
        excess = (error - bound[name]).amax().item()
        worst = (error / bound[name].clamp_min(1e-300)).amax().item()
        assert excess <= 0, f"{label} {name}: error exceeds its bound ({worst:.2f} times the bound)"


def tile_truth_and_bounds(dots, grad, b, n, scale, row_shift, delta, visible):
    r"""``(truth, bound)`` of one tile of the blockwise path's C++ kernels, in float32, given the
    float32 inputs as the kernels get them: ``dots`` ``(B, H, Q, K)`` (``q.k``), ``grad`` (``dL/dp``),
    ``b``, ``n`` ``(H,)``, ``row_shift`` and ``delta`` ``(B, H, Q, 1)``, ``visible`` boolean
    ``(B, H, Q, K)``. Keys: ``p`` (``e^{s - m}``, the forward's and the backward's, which computes
    them alike), ``row_sums``, ``grad_dots`` (``dL/d(q.k)``) and ``grad_n`` (per ``(B, H)``).

    The inputs are exact, so only the kernels' own operations round (the model of the module doc):
    ``scale`` (a double) to float32, ``alpha = b scale`` and ``y = alpha q.k`` (``3u`` relative),
    ``1 + |y|`` (``4u`` relative, so ``log`` errs by ``4u`` absolute, plus its ulp ``2u |l|``),
    ``s = n l`` (``u |s|`` more), ``s - m`` (``u |s - m|``) and ``exp`` (``2u``), hence ``p``'s
    relative error ``4un + 3u|s| + u|s - m| + 2u``, plus ``TINY`` absolute below float32's normal
    range; the row sum adds ``u`` for its final rounding and ``gamma(K)`` of double for its
    accumulation; ``g = p (dp - delta)`` adds ``2u |g|``; ``dL/d(q.k) = g (n alpha) / (1 + |y|)``
    adds ``9u`` relative (``n alpha`` three roundings, ``1 + |y|`` four, the product and the
    quotient one each); ``dL/dn = sum g l`` is summed in double from exact products (of two
    float32 numbers), with ``l``'s error ``4u + 2u |l|``."""
    U, TINY = torch.finfo(torch.float32).eps / 2, torch.finfo(torch.float32).tiny
    U64 = torch.finfo(torch.float64).eps / 2

    def gamma64(terms: int) -> float:
        return terms * U64 / (1 - terms * U64)

    heads = dots.shape[1]
    bh, nh = (value.double().reshape(heads, 1, 1) for value in (b, n))
    shift, row_delta = row_shift.double(), delta.double()
    y = bh * scale * dots.double()
    ell = torch.copysign(torch.log1p(y.abs()), y)
    s = nh * ell
    p = torch.exp(s - shift) * visible
    g = p * (grad.double() - row_delta)
    chain = nh * bh * scale / (1 + y.abs())
    truth = {"p": p, "row_sums": p.sum(-1, keepdim=True), "grad_dots": g * chain, "grad_n": (g * ell).sum((-2, -1))}

    relative_p = 4 * U * nh + 3 * U * s.abs() + U * (s - shift).abs() + 2 * U
    bound_p = (p * relative_p + TINY) * visible
    bound_g = (grad.double() - row_delta).abs() * bound_p + 2 * U * g.abs()
    bound = {
        "p": bound_p,
        "row_sums": bound_p.sum(-1, keepdim=True) + (U + gamma64(dots.shape[-1])) * truth["row_sums"],
        "grad_dots": chain * bound_g + 9 * U * truth["grad_dots"].abs(),
        "grad_n": (
            (bound_g * ell.abs() + g.abs() * (4 * U + 2 * U * ell.abs())).sum((-2, -1))
            + gamma64(dots.shape[-2] * dots.shape[-1]) * (g * ell).abs().sum((-2, -1))
        ),
    }
    return truth, {name: SLACK * value for name, value in bound.items()}
