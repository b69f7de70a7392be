// Throughput of each SIMD kernel on in-cache data, in elements per second
// (GFLOP/s for the matrix product).
#include <cstdio>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "bench_util.hpp"
#include "kernels/activation.hpp"
#include "kernels/dot.hpp"
#include "kernels/layer_norm.hpp"
#include "kernels/matmul.hpp"
#include "kernels/softmax_rows.hpp"
#include "kernels/vec_exp.hpp"

namespace attnscope::bench {

namespace {

using Arch = xsimd::default_arch;

// Each sample runs the kernel `calls` times so one sample is well above the
// clock's resolution.
template <class F>
void report(const char* name, std::size_t elements_per_call, std::size_t calls, F&& kernel) {
  const Timing t = measure(
      [&] {
        for (std::size_t i = 0; i < calls; ++i) kernel();
      },
      150.0, 5, 25);
  const double per_call_ms = t.median_ms / static_cast<double>(calls);
  const double rate = static_cast<double>(elements_per_call) / (per_call_ms * 1e-3);
  std::printf("  %-34s %10.4f ms/call %10.2f Melem/s\n", name, per_call_ms, rate * 1e-6);
}

}  // namespace

void bench_kernels() {
  std::printf("Kernels (arch %s, batch of %zu floats), median of repeated runs\n", Arch::name(),
              xsimd::batch<float, Arch>::size);
  const std::size_t n = 4096;
  const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
  std::vector<float> y(n);

  report("dot (n=4096)", n, 2000, [&] { keep(kernels::dot<Arch>(a.data(), b.data(), n)); });
  report("vec_exp (n=4096)", n, 500, [&] {
    kernels::vec_exp<Arch>(a.data(), y.data(), n);
    keep(y[7]);
  });

  const std::size_t rows = 64, cols = 1024;
  const std::vector<float> logits = random_floats(rows * cols, 3, 3.0f);
  std::vector<float> weights(rows * cols);
  report("softmax_rows (64 x 1024)", rows * cols, 20, [&] {
    kernels::softmax_rows<Arch>(logits.data(), weights.data(), rows, cols, nullptr);
    keep(weights[5]);
  });

  const std::vector<float> gamma(n, 1.25f), beta(n, 0.5f);
  report("layer_norm_row (C=4096)", n, 500, [&] {
    kernels::layer_norm_row<Arch>(a.data(), gamma.data(), beta.data(), 1e-5f, y.data(), n);
    keep(y[3]);
  });
  report("gelu (n=4096)", n, 200, [&] {
    y = a;
    kernels::gelu<Arch>(y.data(), n);
    keep(y[9]);
  });
  report("relu (n=4096)", n, 2000, [&] {
    y = a;
    kernels::relu<Arch>(y.data(), n);
    keep(y[9]);
  });

  // Matrix product: report GFLOP/s (2·m·k·n) next to the element rate.
  const std::size_t m = 256, k = 256, cols_b = 256;
  const std::vector<float> ma = random_floats(m * k, 4), mb = random_floats(k * cols_b, 5);
  std::vector<float> mc(m * cols_b);
  const Timing t = measure(
      [&] {
        kernels::matmul<Arch>(ma.data(), k, mb.data(), cols_b, mc.data(), cols_b, m, k, cols_b);
        keep(mc[11]);
      },
      300.0, 5, 50);
  std::printf("  %-34s %10.4f ms/call %10.2f GFLOP/s\n", "matmul (256 x 256 x 256)", t.median_ms,
              2.0 * m * k * cols_b / (t.median_ms * 1e-3) * 1e-9);
}

}  // namespace attnscope::bench
