// Each build of the kernel suites runs the instruction set it is named for
// (tests/cpp/CMakeLists.txt), so a flag that stopped taking effect shows here
// rather than as a silently narrower test.
#include <catch2/catch.hpp>

#include <string>

#include <xsimd/xsimd.hpp>

#ifdef ATTN_KERNEL_TEST_ARCH
TEST_CASE("the kernel tests run with the instruction set they were built for", "[kernels]") {
  CHECK(std::string(xsimd::default_arch::name()) == ATTN_KERNEL_TEST_ARCH);
}
#endif
