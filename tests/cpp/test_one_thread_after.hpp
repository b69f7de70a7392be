// A guard for the tests that change the thread count: one thread again when
// the test ends, however it ends, so a failure leaves no pool to later tests.
#pragma once

#include "attnscope/threads.hpp"

namespace attnscope::testing {

struct OneThreadAfter {
  ~OneThreadAfter() { set_threads(1); }
};

}  // namespace attnscope::testing
