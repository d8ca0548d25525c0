// SSA attention's element-wise work on CPU, one attention row at a time.
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
// Built with -O3 -ffast-math so that GCC vectorises log and exp (glibc's libmvec); inputs are
// finite, which is what -ffast-math assumes.
#include <torch/extension.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

struct RowLayout {
  int64_t heads, queries, keys;
  bool causal;
  int64_t causal_offset;
  const bool* mask;  // nullptr: no mask
  int64_t mask_strides[4];

  int64_t visible_end(int64_t query) const {  // keys at and beyond this index are hidden
    if (!causal) return keys;
    return std::clamp<int64_t>(query + causal_offset + 1, 0, keys);
  }
  const bool* mask_row(int64_t row) const {
    const int64_t query = row % queries, head = (row / queries) % heads, batch = row / (queries * heads);
    return mask + batch * mask_strides[0] + head * mask_strides[1] + query * mask_strides[2];
  }
};

RowLayout layout_of(const torch::Tensor& y, bool causal, int64_t causal_offset, const c10::optional<torch::Tensor>& mask) {
  RowLayout layout{y.size(1), y.size(2), y.size(3), causal, causal_offset, nullptr, {0, 0, 0, 0}};
  if (mask.has_value()) {
    TORCH_CHECK(mask->scalar_type() == torch::kBool, "ssa_rows: mask must be boolean");
    TORCH_CHECK(mask->dim() == 4 && mask->size(3) == y.size(3), "ssa_rows: mask must be expanded to (B, H, Q, K)");
    layout.mask = mask->data_ptr<bool>();
    for (int d = 0; d < 4; ++d) layout.mask_strides[d] = mask->stride(d);
  }
  return layout;
}

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
    scalar_t total = 0;
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
    const scalar_t inverse = total > 0 ? scalar_t(1) / total : scalar_t(0);  // 0: no visible key
    for (int64_t j = 0; j < visible_end; ++j) w_row[j] *= inverse;
    for (int64_t j = visible_end; j < keys; ++j) w_row[j] = 0;
  }
}

template <typename scalar_t>
void backward_rows(scalar_t* grad, const scalar_t* weights, const scalar_t* y, const scalar_t* n, scalar_t* grad_n_rows,
                   const RowLayout& layout, int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  for (int64_t row = begin; row < end; ++row) {
    scalar_t* g_row = grad + row * keys;  // in: dL/dw, out: dL/dy
    const scalar_t* w_row = weights + row * keys;
    const scalar_t* y_row = y + row * keys;
    const scalar_t n_head = n[(row / layout.queries) % layout.heads];
    const int64_t visible_end = layout.visible_end(row % layout.queries);

    scalar_t inner = 0;  // <dw, w>; hidden keys have w = 0
    for (int64_t j = 0; j < visible_end; ++j) inner += g_row[j] * w_row[j];
    scalar_t grad_n = 0;
    for (int64_t j = 0; j < visible_end; ++j) {
      const scalar_t denominator = scalar_t(1) + std::fabs(y_row[j]);
      const scalar_t grad_score = w_row[j] * (g_row[j] - inner);
      grad_n += grad_score * std::copysign(std::log(denominator), y_row[j]);  // d s / d n = s / n
      g_row[j] = n_head * grad_score / denominator;
    }
    grad_n_rows[row] = grad_n;
    for (int64_t j = visible_end; j < keys; ++j) g_row[j] = 0;
  }
}

void check_matrix(const torch::Tensor& tensor, const char* name) {
  TORCH_CHECK(tensor.device().is_cpu(), "ssa_rows: ", name, " must be on the CPU");
  TORCH_CHECK(tensor.dim() == 4, "ssa_rows: ", name, " must be (B, H, Q, K)");
  TORCH_CHECK(tensor.is_contiguous(), "ssa_rows: ", name, " must be contiguous");
}

void check_n(const torch::Tensor& n, const torch::Tensor& y) {
  TORCH_CHECK(n.dim() == 1 && n.size(0) == y.size(1) && n.is_contiguous() && n.scalar_type() == y.scalar_type(),
              "ssa_rows: n must be a contiguous (H,) tensor of y's dtype");
}

int64_t grain_rows(int64_t keys) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(keys, 1)); }

}  // namespace

// weights (B, H, Q, K) from y = b x (B, H, Q, K) and n (H,)
torch::Tensor ssa_rows_forward(const torch::Tensor& y, const torch::Tensor& n, bool causal, int64_t causal_offset,
                               const c10::optional<torch::Tensor>& mask) {
  check_matrix(y, "y");
  check_n(n, y);
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

// dL/dy (written over grad_weights) and dL/dn per row (B, H, Q)
torch::Tensor ssa_rows_backward(torch::Tensor grad_weights, const torch::Tensor& weights, const torch::Tensor& y,
                                const torch::Tensor& n, bool causal, int64_t causal_offset,
                                const c10::optional<torch::Tensor>& mask) {
  check_matrix(grad_weights, "grad_weights");
  check_matrix(weights, "weights");
  check_matrix(y, "y");
  TORCH_CHECK(grad_weights.sizes() == y.sizes() && weights.sizes() == y.sizes(), "ssa_rows: matrices must have one shape");
  check_n(n, y);
  const RowLayout layout = layout_of(y, causal, causal_offset, mask);
  const int64_t rows = y.numel() / std::max<int64_t>(layout.keys, 1);
  auto grad_n_rows = torch::empty({y.size(0), y.size(1), y.size(2)}, y.options());
  AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "ssa_rows_backward", [&] {
    scalar_t* g_data = grad_weights.data_ptr<scalar_t>();
    const scalar_t* w_data = weights.data_ptr<scalar_t>();
    const scalar_t* y_data = y.data_ptr<scalar_t>();
    const scalar_t* n_data = n.data_ptr<scalar_t>();
    scalar_t* grad_n_data = grad_n_rows.data_ptr<scalar_t>();
    at::parallel_for(0, rows, grain_rows(layout.keys), [&](int64_t begin, int64_t end) {
      backward_rows<scalar_t>(g_data, w_data, y_data, n_data, grad_n_data, layout, begin, end);
    });
  });
  return grad_n_rows;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.def("forward", &ssa_rows_forward, "SSA weights from b x, row by row");
  module.def("backward", &ssa_rows_backward, "dL/dy (in place) and dL/dn per row");
}
