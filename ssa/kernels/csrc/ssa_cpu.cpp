// SSA attention's element-wise work on CPU: rows of the direct path, tiles of the blockwise path.
//
// The direct path (ssa/kernels/direct.py) multiplies the matrices with ATen and hands the
// (B, H, Q, K) matrix y = b x (x = q.k scale) to these two loops. Each row is read once and
// stays in the L1 cache while it is scored, normalised and (in the backward) differentiated:
// two passes over the matrix instead of the dozen that separate PyTorch operations make.
//
//   forward:   s_j = sgn(y_j) n log(1 + |y_j|),  w_j = e^(s_j - max s) / sum_visible e^(s - max s)
//   backward:  g_j = w_j (dw_j - <dw, w>),        dL/dy_j = n g_j / (1 + |y_j|),
//              dL/dn (per row) = sum_j g_j s_j / n
//
// Keys j <= i + causal_offset are visible when `causal`; a boolean mask (any strides,
// broadcast dimensions with stride 0) hides more. A row with no visible key gets weight 0.
//
// The blockwise path (ssa/kernels/blockwise.py) calls the two tile functions at the end on each
// (query block x key block) tile of q.k, with its per-row shift m (an upper bound of the row's
// scores, or the log-sum-exp L in the backward):
//
//   tile forward:   p = e^(s - m) on visible entries, 0 elsewhere (written over q.k), and sum_j p
//   tile backward:  p = e^(s - L), g = p (dp - delta), dL/d(q.k) = g n b scale / (1 + b scale |q.k|)
//                   (written over dp), p (written over q.k), and dL/dn = sum g s / n per (B, H)
//
// These tile functions run float64 tiles, and float32 ones on CPUs without AVX2 (or with
// ATEN_CPU_CAPABILITY=default); elsewhere ssa_cpu_vec.cpp runs float32 tiles vectorised.
// Built with IEEE arithmetic for the x86-64 baseline (no -ffast-math, no -march=native, no FMA
// contraction; ssa/kernels/native.py): the same machine code on every x86-64 CPU, exp and log
// from glibc (at most 1 ulp on x86-64, glibc manual). Row sums and the per-row dL/dn are
// accumulated in double, so their rounding is far below that of the float32 terms summed.
// Hidden keys are never read beyond their mask bit: non-finite values there cannot reach an output.
#include "ssa_cpu.h"

namespace {

template <typename scalar_t>
inline scalar_t signed_log_score(scalar_t y, scalar_t n) {
  return std::copysign(n * std::log(scalar_t(1) + std::fabs(y)), y);
}

template <typename scalar_t>
void forward_rows(const scalar_t* y, const scalar_t* n, scalar_t* weights, const RowLayout& layout, int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  const scalar_t lowest = std::numeric_limits<scalar_t>::lowest();
  for (int64_t row = begin; row < end; ++row) {
    const scalar_t* y_row = y + row * keys;
    scalar_t* w_row = weights + row * keys;
    const scalar_t n_head = n[(row / layout.queries) % layout.heads];
    const int64_t visible_end = layout.visible_end(row % layout.queries);
    const bool* mask = layout.mask ? layout.mask_row(row) : nullptr;
    const int64_t mask_step = layout.mask_strides[3];

    for (int64_t j = 0; j < visible_end; ++j) w_row[j] = signed_log_score(y_row[j], n_head);
    scalar_t row_max = lowest;
    if (mask) {
      for (int64_t j = 0; j < visible_end; ++j) row_max = mask[j * mask_step] ? std::max(row_max, w_row[j]) : row_max;
    } else {
      for (int64_t j = 0; j < visible_end; ++j) row_max = std::max(row_max, w_row[j]);
    }
    double total = 0;
    if (mask) {
      for (int64_t j = 0; j < visible_end; ++j) {
        const scalar_t e = mask[j * mask_step] ? std::exp(w_row[j] - row_max) : scalar_t(0);
        w_row[j] = e;
        total += e;
      }
    } else {
      for (int64_t j = 0; j < visible_end; ++j) {
        const scalar_t e = std::exp(w_row[j] - row_max);
        w_row[j] = e;
        total += e;
      }
    }
    const scalar_t inverse = total > 0 ? static_cast<scalar_t>(1.0 / total) : scalar_t(0);  // 0: no visible key
    for (int64_t j = 0; j < visible_end; ++j) w_row[j] *= inverse;
    for (int64_t j = visible_end; j < keys; ++j) w_row[j] = 0;
  }
}

template <typename scalar_t>
void backward_rows(scalar_t* grad, const scalar_t* weights, const scalar_t* y, const scalar_t* n, double* grad_n_rows,
                   const RowLayout& layout, int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  for (int64_t row = begin; row < end; ++row) {
    scalar_t* g_row = grad + row * keys;  // in: dL/dw, out: dL/dy
    const scalar_t* w_row = weights + row * keys;
    const scalar_t* y_row = y + row * keys;
    const scalar_t n_head = n[(row / layout.queries) % layout.heads];
    const int64_t visible_end = layout.visible_end(row % layout.queries);

    double inner_sum = 0;  // <dw, w>; hidden keys have w = 0
    for (int64_t j = 0; j < visible_end; ++j) {
      if (w_row[j] != 0) inner_sum += double(g_row[j]) * double(w_row[j]);  // w = 0: hidden, whatever dw is
    }
    const scalar_t inner = static_cast<scalar_t>(inner_sum);
    double grad_n = 0;
    for (int64_t j = 0; j < visible_end; ++j) {
      const scalar_t denominator = scalar_t(1) + std::fabs(y_row[j]);
      if (w_row[j] == 0) {  // hidden (or underflowed): no gradient, whatever y and dw hold
        g_row[j] = 0;
        continue;
      }
      const scalar_t grad_score = w_row[j] * (g_row[j] - inner);
      grad_n += double(grad_score) * std::copysign(std::log(denominator), y_row[j]);  // d s / d n = s / n
      g_row[j] = n_head * grad_score / denominator;
    }
    grad_n_rows[row] = grad_n;
    for (int64_t j = visible_end; j < keys; ++j) g_row[j] = 0;
  }
}

template <typename scalar_t>
void forward_tile_rows(scalar_t* dots, scalar_t* row_sums, const TileInputs<scalar_t>& in, const RowLayout& layout,
                       int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  for (int64_t row = begin; row < end; ++row) {
    scalar_t* d_row = dots + row * keys;
    const int64_t head = (row / layout.queries) % layout.heads;
    const scalar_t alpha = in.b[head] * in.scale, n_head = in.n[head], shift = in.row_shift[row];
    const int64_t visible_end = layout.visible_end(row % layout.queries);
    double total = 0;
    if (layout.mask) {
      const bool* mask = layout.mask_row(row);
      const int64_t mask_step = layout.mask_strides[3];
      for (int64_t j = 0; j < visible_end; ++j) {
        const scalar_t p = mask[j * mask_step] ? std::exp(signed_log_score(alpha * d_row[j], n_head) - shift) : scalar_t(0);
        d_row[j] = p;
        total += p;
      }
    } else {
      for (int64_t j = 0; j < visible_end; ++j) {
        const scalar_t p = std::exp(signed_log_score(alpha * d_row[j], n_head) - shift);
        d_row[j] = p;
        total += p;
      }
    }
    for (int64_t j = visible_end; j < keys; ++j) d_row[j] = 0;
    row_sums[row] = static_cast<scalar_t>(total);
  }
}

template <typename scalar_t>
void backward_tile_rows(scalar_t* dots, scalar_t* grad, const scalar_t* delta, double* grad_n_rows,
                        const TileInputs<scalar_t>& in, const RowLayout& layout, int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  for (int64_t row = begin; row < end; ++row) {
    scalar_t* d_row = dots + row * keys;  // in: q.k, out: p
    scalar_t* g_row = grad + row * keys;  // in: dL/dp, out: dL/d(q.k)
    const int64_t head = (row / layout.queries) % layout.heads;
    const scalar_t alpha = in.b[head] * in.scale, n_head = in.n[head], shift = in.row_shift[row];
    const scalar_t chain = n_head * alpha, row_delta = delta[row];
    const int64_t visible_end = layout.visible_end(row % layout.queries);
    const bool* mask = layout.mask ? layout.mask_row(row) : nullptr;
    const int64_t mask_step = layout.mask_strides[3];
    double grad_n = 0;
    for (int64_t j = 0; j < visible_end; ++j) {
      const scalar_t y = alpha * d_row[j];
      const scalar_t denominator = scalar_t(1) + std::fabs(y);
      const scalar_t log_term = std::copysign(std::log(denominator), y);  // s / n
      const bool visible = mask ? mask[j * mask_step] : true;
      const scalar_t p = visible ? std::exp(n_head * log_term - shift) : scalar_t(0);
      d_row[j] = p;
      if (p == 0) {  // hidden (or underflowed): no gradient, whatever q.k and dp hold
        g_row[j] = 0;
        continue;
      }
      const scalar_t grad_score = p * (g_row[j] - row_delta);
      grad_n += double(grad_score) * log_term;
      g_row[j] = grad_score * chain / denominator;
    }
    for (int64_t j = visible_end; j < keys; ++j) d_row[j] = g_row[j] = 0;
    grad_n_rows[row] = grad_n;
  }
}

}  // namespace

// weights (B, H, Q, K) from y = b x (B, H, Q, K) and n (H,)
torch::Tensor ssa_rows_forward(const torch::Tensor& y, const torch::Tensor& n, bool causal, int64_t causal_offset,
                               const c10::optional<torch::Tensor>& mask) {
  check_matrix(y, "y");
  check_per_head(n, y, "n");
  auto weights = torch::empty_like(y);
  const RowLayout layout = layout_of(y, causal, causal_offset, mask);
  const int64_t rows = y.numel() / std::max<int64_t>(layout.keys, 1);
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "ssa_rows_forward", [&] {
    const scalar_t* y_data = y.data_ptr<scalar_t>();
    const scalar_t* n_data = n.data_ptr<scalar_t>();
    scalar_t* w_data = weights.data_ptr<scalar_t>();
    at::parallel_for(0, rows, grain_rows(layout.keys), [&](int64_t begin, int64_t end) {
      forward_rows<scalar_t>(y_data, n_data, w_data, layout, begin, end);
    });
  });
  return weights;
}

// dL/dy (written over grad_weights) and dL/dn per row (B, H, Q), in double
torch::Tensor ssa_rows_backward(torch::Tensor grad_weights, const torch::Tensor& weights, const torch::Tensor& y,
                                const torch::Tensor& n, bool causal, int64_t causal_offset,
                                const c10::optional<torch::Tensor>& mask) {
  check_matrix(grad_weights, "grad_weights");
  check_matrix(weights, "weights");
  check_matrix(y, "y");
  TORCH_CHECK(grad_weights.sizes() == y.sizes() && weights.sizes() == y.sizes(), "ssa_cpu: matrices must have one shape");
  check_per_head(n, y, "n");
  const RowLayout layout = layout_of(y, causal, causal_offset, mask);
  const int64_t rows = y.numel() / std::max<int64_t>(layout.keys, 1);
  auto grad_n_rows = torch::empty({y.size(0), y.size(1), y.size(2)}, y.options().dtype(torch::kDouble));
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "ssa_rows_backward", [&] {
    scalar_t* g_data = grad_weights.data_ptr<scalar_t>();
    const scalar_t* w_data = weights.data_ptr<scalar_t>();
    const scalar_t* y_data = y.data_ptr<scalar_t>();
    const scalar_t* n_data = n.data_ptr<scalar_t>();
    double* grad_n_data = grad_n_rows.data_ptr<double>();
    at::parallel_for(0, rows, grain_rows(layout.keys), [&](int64_t begin, int64_t end) {
      backward_rows<scalar_t>(g_data, w_data, y_data, n_data, grad_n_data, layout, begin, end);
    });
  });
  return grad_n_rows;
}

// Forward tile: dots (B, H, Q, K) becomes e^(s - row_shift); returns the row sums (B, H, Q, 1).
torch::Tensor ssa_tile_forward(torch::Tensor dots, const torch::Tensor& b, const torch::Tensor& n, double scale,
                               const torch::Tensor& row_shift, bool causal, int64_t causal_offset,
                               const c10::optional<torch::Tensor>& mask) {
  check_matrix(dots, "dots");
  const RowLayout layout = layout_of(dots, causal, causal_offset, mask);
  torch::Tensor row_sums;
  AT_DISPATCH_FLOATING_TYPES(dots.scalar_type(), "ssa_tile_forward", [&] {
    row_sums = run_forward_tile<scalar_t>(dots, b, n, scale, row_shift, layout, forward_tile_rows<scalar_t>);
  });
  return row_sums;
}

// Backward tile: dots becomes p, grad (dL/dp) becomes dL/d(q.k); returns dL/dn per (B, H), in double.
torch::Tensor ssa_tile_backward(torch::Tensor dots, torch::Tensor grad, const torch::Tensor& log_sum_exp,
                                const torch::Tensor& delta, const torch::Tensor& b, const torch::Tensor& n, double scale,
                                bool causal, int64_t causal_offset, const c10::optional<torch::Tensor>& mask) {
  check_backward_tile(dots, grad, log_sum_exp, delta);
  const RowLayout layout = layout_of(dots, causal, causal_offset, mask);
  torch::Tensor grad_n;
  AT_DISPATCH_FLOATING_TYPES(dots.scalar_type(), "ssa_tile_backward", [&] {
    grad_n = run_backward_tile<scalar_t>(dots, grad, log_sum_exp, delta, b, n, scale, layout, backward_tile_rows<scalar_t>);
  });
  return grad_n;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.def("tile_forward", &ssa_tile_forward, "blockwise forward tile: probabilities in place, row sums");
  module.def("tile_backward", &ssa_tile_backward, "blockwise backward tile: p and dL/d(q.k) in place, dL/dn per (B, H)");
  module.def("forward", &ssa_rows_forward, "SSA weights from b x, row by row");
  module.def("backward", &ssa_rows_backward, "dL/dy (in place) and dL/dn per row");
}
