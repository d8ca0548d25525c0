// What the scalar kernels (ssa_cpu.cpp) and the vectorised tile kernels (ssa_cpu_vec.cpp) share:
// the layout of a (B, H, Q, K) matrix's rows with their visible keys, the checks of the
// arguments, and the calls of the tile kernels over a tile's rows.
#pragma once

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
    TORCH_CHECK(mask->scalar_type() == torch::kBool, "ssa_cpu: mask must be boolean");
    TORCH_CHECK(mask->dim() == 4 && mask->size(3) == y.size(3), "ssa_cpu: mask must be expanded to (B, H, Q, K)");
    layout.mask = mask->data_ptr<bool>();
    for (int d = 0; d < 4; ++d) layout.mask_strides[d] = mask->stride(d);
  }
  return layout;
}

// One tile's shared inputs: SSA's b and n per head, the scale, the per-row shift (B, H, Q, 1).
template <typename scalar_t>
struct TileInputs {
  const scalar_t* b;
  const scalar_t* n;
  scalar_t scale;
  const scalar_t* row_shift;
};

void check_matrix(const torch::Tensor& tensor, const char* name) {
  TORCH_CHECK(tensor.device().is_cpu(), "ssa_cpu: ", name, " must be on the CPU");
  TORCH_CHECK(tensor.dim() == 4, "ssa_cpu: ", name, " must be (B, H, Q, K)");
  TORCH_CHECK(tensor.is_contiguous(), "ssa_cpu: ", name, " must be contiguous");
}

// b or n: one value per head of the (B, H, Q, K) matrix, contiguous, in its dtype.
void check_per_head(const torch::Tensor& value, const torch::Tensor& matrix, const char* name) {
  TORCH_CHECK(value.dim() == 1 && value.size(0) == matrix.size(1) && value.is_contiguous() &&
              value.scalar_type() == matrix.scalar_type(),
              "ssa_cpu: ", name, " must be a contiguous (H,) tensor of the matrix's dtype");
}

int64_t grain_rows(int64_t keys) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(keys, 1)); }

int64_t row_count(const torch::Tensor& matrix, const RowLayout& layout) {
  return matrix.numel() / std::max<int64_t>(layout.keys, 1);
}

template <typename scalar_t>
TileInputs<scalar_t> tile_inputs(const torch::Tensor& dots, const torch::Tensor& b, const torch::Tensor& n, double scale,
                                 const torch::Tensor& row_shift) {
  check_per_head(b, dots, "b");
  check_per_head(n, dots, "n");
  TORCH_CHECK(row_shift.is_contiguous() && row_shift.numel() * dots.size(3) == dots.numel() &&
              row_shift.scalar_type() == dots.scalar_type(), "ssa_cpu: row statistics must be contiguous (B, H, Q, 1)");
  return {b.data_ptr<scalar_t>(), n.data_ptr<scalar_t>(), static_cast<scalar_t>(scale), row_shift.data_ptr<scalar_t>()};
}

// Forward tile: `tile_rows(dots, row_sums, inputs, layout, begin, end)` turns the rows [begin,
// end) of dots into e^(s - row_shift) and writes their sums; returns the row sums (B, H, Q, 1).
template <typename scalar_t, typename TileRows>
torch::Tensor run_forward_tile(torch::Tensor& dots, const torch::Tensor& b, const torch::Tensor& n, double scale,
                               const torch::Tensor& row_shift, const RowLayout& layout, TileRows tile_rows) {
  auto row_sums = torch::empty({dots.size(0), dots.size(1), dots.size(2), 1}, dots.options());
  const auto in = tile_inputs<scalar_t>(dots, b, n, scale, row_shift);
  scalar_t* d_data = dots.data_ptr<scalar_t>();
  scalar_t* sum_data = row_sums.data_ptr<scalar_t>();
  at::parallel_for(0, row_count(dots, layout), grain_rows(layout.keys), [&](int64_t begin, int64_t end) {
    tile_rows(d_data, sum_data, in, layout, begin, end);
  });
  return row_sums;
}

void check_backward_tile(const torch::Tensor& dots, const torch::Tensor& grad, const torch::Tensor& log_sum_exp,
                         const torch::Tensor& delta) {
  check_matrix(dots, "dots");
  check_matrix(grad, "grad");
  TORCH_CHECK(grad.sizes() == dots.sizes(), "ssa_cpu: matrices must have one shape");
  TORCH_CHECK(delta.is_contiguous() && delta.numel() == log_sum_exp.numel() && delta.scalar_type() == dots.scalar_type(),
              "ssa_cpu: row statistics must be contiguous (B, H, Q, 1)");
}

// Backward tile: `tile_rows(dots, grad, delta, grad_n_rows, inputs, layout, begin, end)` turns
// the rows [begin, end) of dots into p and of grad (dL/dp) into dL/d(q.k), and writes dL/dn per
// row; returns dL/dn per (B, H), in double.
template <typename scalar_t, typename TileRows>
torch::Tensor run_backward_tile(torch::Tensor& dots, torch::Tensor& grad, const torch::Tensor& log_sum_exp,
                                const torch::Tensor& delta, const torch::Tensor& b, const torch::Tensor& n, double scale,
                                const RowLayout& layout, TileRows tile_rows) {
  auto grad_n_rows = torch::empty({dots.size(0), dots.size(1), dots.size(2)}, dots.options().dtype(torch::kDouble));
  const auto in = tile_inputs<scalar_t>(dots, b, n, scale, log_sum_exp);
  scalar_t* d_data = dots.data_ptr<scalar_t>();
  scalar_t* g_data = grad.data_ptr<scalar_t>();
  const scalar_t* delta_data = delta.data_ptr<scalar_t>();
  double* grad_n_data = grad_n_rows.data_ptr<double>();
  at::parallel_for(0, row_count(dots, layout), grain_rows(layout.keys), [&](int64_t begin, int64_t end) {
    tile_rows(d_data, g_data, delta_data, grad_n_data, in, layout, begin, end);
  });
  return grad_n_rows.sum(2);
}

}  // namespace
