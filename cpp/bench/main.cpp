// attnscope_bench: kernels, attention by sequence length, one transformer
// block. Usage: attnscope_bench [max_T]   (default 4096)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnscope/attnscope.hpp"

namespace attnscope::bench {
void bench_kernels();
void bench_attention(std::size_t max_t);
void bench_block();
}  // namespace attnscope::bench

int main(int argc, char** argv) {
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
  return 0;
}
