// attnscope_bench: kernels, attention by sequence length, one transformer
// block, then the modern variants (GQA, decode, window, RoPE, ALiBi).
// Usage: attnscope_bench [max_T]   (default 4096)
//        attnscope_bench variants [max_T [window_T]]   (defaults 4096, 16384)
//        attnscope_bench gpt2 [layers]   (GPT-2 small's shape, default 12 layers)
//        attnscope_bench train [layers heads C V T B]   (one training step; default 2 4 128 512 128
//        8)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnscope/attnscope.hpp"

namespace attnscope::bench {
void bench_kernels();
void bench_attention(std::size_t max_t);
void bench_block();
void bench_variants(std::size_t max_t, std::size_t window_t);
void bench_gpt2(std::size_t layers);
void bench_train(std::size_t layers, std::size_t heads, std::size_t d_model, std::size_t vocab,
                 std::size_t length, std::size_t batch);
}  // namespace attnscope::bench

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "variants") {
    const std::size_t max_t = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4096;
    const std::size_t window_t = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 16384;
    std::printf("attnscope %s, SIMD %s; times are thread CPU time, median of runs\n",
                attnscope::version(), attnscope::simd_arch());
    attnscope::bench::bench_variants(max_t, window_t);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "gpt2") {
    const std::size_t layers = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 12;
    std::printf("attnscope %s, SIMD %s; times are thread CPU time\n", attnscope::version(),
                attnscope::simd_arch());
    attnscope::bench::bench_gpt2(layers > 0 ? layers : 12);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "train") {
    std::size_t sizes[6] = {2, 4, 128, 512, 128, 8};
    for (int i = 2; i < argc && i < 8; ++i) sizes[i - 2] = std::strtoull(argv[i], nullptr, 10);
    std::printf("attnscope %s, SIMD %s; times are thread CPU time\n", attnscope::version(),
                attnscope::simd_arch());
    attnscope::bench::bench_train(sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5]);
    return 0;
  }
  std::size_t max_t = 4096;
  if (argc > 1) max_t = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
  if (max_t < 64) {
    std::fprintf(stderr, "usage: %s [max_T >= 64]\n", argv[0]);
    return 2;
  }
  std::printf("attnscope %s, SIMD %s; times are thread CPU time, median of runs\n\n",
              attnscope::version(), attnscope::simd_arch());
  attnscope::bench::bench_kernels();
  attnscope::bench::bench_attention(max_t);
  attnscope::bench::bench_block();
  attnscope::bench::bench_variants(max_t, 16384);
  return 0;
}
