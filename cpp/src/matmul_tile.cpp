#include "attnscope/matmul_tile.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

#if defined(__wasm__)
#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/matmul.hpp"
#endif

namespace attnscope {
namespace {

#if defined(__wasm__)
using kernels::call_outlined;
using kernels::kMatmulDepthBlock;
using kernels::kMatmulPackWidth;
using kernels::matmul_with;
using kernels::PanelsB;
using Arch = xsimd::default_arch;
constexpr std::size_t kPanel = kernels::matmul_panel_width<Arch>();

/// Seconds for `passes` products as a GPT-2-small block runs them at 64
/// tokens (64 rows, 768 steps, one pass of kMatmulPackWidth columns in
/// panels), through the out-of-line kernel matmul_panel calls.
template <std::size_t kRows>
double time_panels(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c,
                   int passes) {
  constexpr std::size_t m = 64, k = 768, n = kMatmulPackWidth;
  const auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < passes; ++pass) {
    for (std::size_t p0 = 0; p0 < k; p0 += kMatmulDepthBlock) {
      for (std::size_t j = 0; j < n; j += kPanel) {
        const PanelsB<kPanel> panel{b.data() + j * k + p0 * kPanel, k * kPanel};
        call_outlined<&matmul_with<Arch, k, PanelsB<kPanel>, kRows>>(
            a.data() + p0, k, panel, c.data() + j, n, m, kMatmulDepthBlock, kPanel, p0 > 0);
      }
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The faster height on this engine. Each is timed in alternation, and the
/// best time of each kept, until neither has improved by 5 % for four rounds
/// (at least six rounds, at most forty): the engine first runs a function
/// through its baseline compiler and swaps in the optimised code some
/// milliseconds later, not necessarily for both heights in the same round.
/// 6 only when clearly faster, so that a timer browsers coarsen to 0.1 ms
/// does not decide a tie.
std::size_t measure_tile_rows() {
  std::vector<float> a(64 * 768), b(768 * kMatmulPackWidth), c(64 * kMatmulPackWidth);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.01f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) * 0.01f;
  constexpr int kPasses = 4;
  double best4 = 1e9, best6 = 1e9;
  int unchanged = 0;
  for (int round = 0; round < 40 && (round < 6 || unchanged < 4); ++round) {
    const double t4 = time_panels<4>(a, b, c, kPasses);
    const double t6 = time_panels<kMatmulTallRows>(a, b, c, kPasses);
    const bool improved = t4 < 0.95 * best4 || t6 < 0.95 * best6;
    best4 = std::min(best4, t4);
    best6 = std::min(best6, t6);
    unchanged = improved ? 0 : unchanged + 1;
  }
  return best6 < 0.97 * best4 ? kMatmulTallRows : 4;
}
#else
std::size_t measure_tile_rows() { return 4; }
#endif

std::atomic<std::size_t> g_rows{4};
std::once_flag g_decided;

}  // namespace

std::size_t matmul_tile_rows() { return g_rows.load(std::memory_order_relaxed); }

void set_matmul_tile_rows(std::size_t rows) {
  if (rows != 0 && rows != 4 && rows != kMatmulTallRows) {
    throw std::invalid_argument("matmul tile rows must be 4 or 6 (0: measure), got " +
                                std::to_string(rows));
  }
  std::call_once(g_decided, [] {});  // a height set here is not measured over later
  g_rows.store(rows == 0 ? measure_tile_rows() : rows, std::memory_order_relaxed);
}

void measure_matmul_tile_rows_once() {
  std::call_once(g_decided, [] { g_rows.store(measure_tile_rows(), std::memory_order_relaxed); });
}

}  // namespace attnscope
