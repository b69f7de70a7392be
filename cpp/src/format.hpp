// Number formatting for error messages. snprintf's %g gives the same text as
// an ostream with default flags (precision 6) or with setprecision(n),
// without pulling iostream and locale into the wasm (dropping <sstream>
// took the module from 393 KB to about 250 KB).
#pragma once

#include <cstdio>
#include <string>

namespace attnscope::detail {

/// `value` as "%.<digits>g": "1e-05", "0.125", "nan", "-inf".
inline std::string format_value(double value, int digits = 6) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%.*g", digits, value);
  return std::string(text, n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace attnscope::detail
