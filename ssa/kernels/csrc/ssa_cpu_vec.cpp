// The blockwise path's tile kernels for float32, vectorised with ATen's Vectorized<float>: the
// maths of ssa_cpu.cpp's forward_tile_rows and backward_tile_rows, eight (AVX2) or sixteen
// (AVX-512) keys at a time. ssa/kernels/native.py compiles this source once per instruction set
// (CPU_CAPABILITY_AVX2 or CPU_CAPABILITY_AVX512, which select ATen's implementation) and loads
// only the one the CPU executes.
//
// Still IEEE arithmetic: no -ffast-math, no contraction of a * b + c into an FMA, so every lane
// rounds as the scalar code's operations do, except exp and log, which are SLEEF's
// (Sleef_expf8_u10 / Sleef_logf8_u10 and their 16-lane versions, exported by libtorch_cpu):
// at most 1.0 ulp, like glibc's, with IEEE special values (exp underflows to 0, log(inf) = inf).
// The last, partial vector of a row goes through the same code with the missing lanes masked,
// so a key's probability does not depend on where it sits in the row. Row sums and dL/dn are
// accumulated in double, as in the scalar kernels. Hidden keys are computed with their vector
// and then replaced by 0 bit for bit (a blend, not a product): whatever they hold, even inf or
// NaN, cannot reach an output.
#include "ssa_cpu.h"

#include <ATen/cpu/vec/vec.h>
#include <c10/macros/Macros.h>

namespace {

using Vec = at::vec::Vectorized<float>;
using DoubleVec = at::vec::Vectorized<double>;
constexpr int64_t kLanes = Vec::size();

// All-ones in the lanes [0, count) whose key the mask shows (mask: nullptr for none; step: its
// stride along the keys), zero elsewhere.
Vec visible_lanes(const bool* mask, int64_t step, int64_t count) {
  __at_align__ float shown[kLanes];
  for (int64_t lane = 0; lane < kLanes; ++lane) shown[lane] = lane < count && (!mask || mask[lane * step]) ? 1.f : 0.f;
  return Vec::loadu(shown) != Vec(0.f);
}

// A sum in double of float32 lanes, each widened exactly before it is added.
class DoubleSum {
 public:
  void add(const Vec& terms) {
    const auto wide = widen(terms);
    low_ = low_ + wide[0];
    high_ = high_ + wide[1];
  }
  // sum of a * b, the products taken in double
  void add_products(const Vec& a, const Vec& b) {
    const auto wide_a = widen(a), wide_b = widen(b);
    low_ = low_ + wide_a[0] * wide_b[0];
    high_ = high_ + wide_a[1] * wide_b[1];
  }
  double total() const {
    __at_align__ double lanes[2 * DoubleVec::size()];
    low_.store(lanes);
    high_.store(lanes + DoubleVec::size());
    double sum = 0;
    for (double lane : lanes) sum += lane;
    return sum;
  }

 private:
  static at::vec::VectorizedN<double, 2> widen(const Vec& terms) {
    return at::vec::convert<double, 2, float, 1>(at::vec::VectorizedN<float, 1>(terms));
  }
  DoubleVec low_{0.0}, high_{0.0};
};

// sgn(y) n log(1 + |y|), as ssa_cpu.cpp's signed_log_score
Vec signed_log_score(const Vec& y, const Vec& n) { return (n * (Vec(1.f) + y.abs()).log()).copysign(y); }

void forward_tile_rows(float* dots, float* row_sums, const TileInputs<float>& in, const RowLayout& layout, int64_t begin,
                       int64_t end) {
  const int64_t keys = layout.keys;
  const int64_t mask_step = layout.mask_strides[3];
  const Vec zero(0.f);
  for (int64_t row = begin; row < end; ++row) {
    float* d_row = dots + row * keys;
    const int64_t head = (row / layout.queries) % layout.heads;
    const Vec alpha(in.b[head] * in.scale), n_head(in.n[head]), shift(in.row_shift[row]);
    const int64_t visible_end = layout.visible_end(row % layout.queries);
    const bool* mask = layout.mask ? layout.mask_row(row) : nullptr;
    DoubleSum total;
    for (int64_t j = 0; j < visible_end; j += kLanes) {
      const int64_t count = std::min(kLanes, visible_end - j);
      Vec p = (signed_log_score(alpha * Vec::loadu(d_row + j, count), n_head) - shift).exp();
      if (mask || count < kLanes) p = Vec::blendv(zero, p, visible_lanes(mask ? mask + j * mask_step : nullptr, mask_step, count));
      p.store(d_row + j, count);
      total.add(p);
    }
    std::fill(d_row + visible_end, d_row + keys, 0.f);
    row_sums[row] = static_cast<float>(total.total());
  }
}

void backward_tile_rows(float* dots, float* grad, const float* delta, double* grad_n_rows, const TileInputs<float>& in,
                        const RowLayout& layout, int64_t begin, int64_t end) {
  const int64_t keys = layout.keys;
  const int64_t mask_step = layout.mask_strides[3];
  const Vec zero(0.f), one(1.f);
  for (int64_t row = begin; row < end; ++row) {
    float* d_row = dots + row * keys;  // in: q.k, out: p
    float* g_row = grad + row * keys;  // in: dL/dp, out: dL/d(q.k)
    const int64_t head = (row / layout.queries) % layout.heads;
    const float alpha = in.b[head] * in.scale;
    const Vec alpha_lanes(alpha), n_head(in.n[head]), shift(in.row_shift[row]), row_delta(delta[row]);
    const Vec chain(in.n[head] * alpha);
    const int64_t visible_end = layout.visible_end(row % layout.queries);
    const bool* mask = layout.mask ? layout.mask_row(row) : nullptr;
    DoubleSum grad_n;
    for (int64_t j = 0; j < visible_end; j += kLanes) {
      const int64_t count = std::min(kLanes, visible_end - j);
      const Vec y = alpha_lanes * Vec::loadu(d_row + j, count);
      const Vec denominator = one + y.abs();
      const Vec log_term = denominator.log().copysign(y);  // s / n
      Vec p = (n_head * log_term - shift).exp();
      if (mask || count < kLanes) p = Vec::blendv(zero, p, visible_lanes(mask ? mask + j * mask_step : nullptr, mask_step, count));
      p.store(d_row + j, count);
      const Vec live = p != zero;  // hidden (or underflowed): no gradient, whatever q.k and dp hold
      const Vec grad_score = Vec::blendv(zero, p * (Vec::loadu(g_row + j, count) - row_delta), live);
      grad_n.add_products(grad_score, Vec::blendv(zero, log_term, live));
      Vec::blendv(zero, grad_score * chain / denominator, live).store(g_row + j, count);
    }
    std::fill(d_row + visible_end, d_row + keys, 0.f);
    std::fill(g_row + visible_end, g_row + keys, 0.f);
    grad_n_rows[row] = grad_n.total();
  }
}

void check_float32(const torch::Tensor& dots) {
  TORCH_CHECK(dots.scalar_type() == torch::kFloat, "ssa_cpu: the vectorised tiles take float32 (float64 has the scalar ones)");
}

}  // namespace

// Forward tile: dots (B, H, Q, K) becomes e^(s - row_shift); returns the row sums (B, H, Q, 1).
torch::Tensor ssa_tile_forward(torch::Tensor dots, const torch::Tensor& b, const torch::Tensor& n, double scale,
                               const torch::Tensor& row_shift, bool causal, int64_t causal_offset,
                               const c10::optional<torch::Tensor>& mask) {
  check_matrix(dots, "dots");
  check_float32(dots);
  const RowLayout layout = layout_of(dots, causal, causal_offset, mask);
  return run_forward_tile<float>(dots, b, n, scale, row_shift, layout, forward_tile_rows);
}

// Backward tile: dots becomes p, grad (dL/dp) becomes dL/d(q.k); returns dL/dn per (B, H), in double.
torch::Tensor ssa_tile_backward(torch::Tensor dots, torch::Tensor grad, const torch::Tensor& log_sum_exp,
                                const torch::Tensor& delta, const torch::Tensor& b, const torch::Tensor& n, double scale,
                                bool causal, int64_t causal_offset, const c10::optional<torch::Tensor>& mask) {
  check_backward_tile(dots, grad, log_sum_exp, delta);
  check_float32(dots);
  const RowLayout layout = layout_of(dots, causal, causal_offset, mask);
  return run_backward_tile<float>(dots, grad, log_sum_exp, delta, b, n, scale, layout, backward_tile_rows);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, module) {
  module.attr("instruction_set") = C10_STRINGIZE(CPU_CAPABILITY);
  module.def("tile_forward", &ssa_tile_forward, "blockwise forward tile (float32): probabilities in place, row sums");
  module.def("tile_backward", &ssa_tile_backward,
             "blockwise backward tile (float32): p and dL/d(q.k) in place, dL/dn per (B, H)");
}
