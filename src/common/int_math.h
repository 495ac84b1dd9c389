// Integer arithmetic shared by the components.
#pragma once

#include <cstdint>

namespace tessera {

// ceil(a / b) for a >= 0 and b > 0.
constexpr int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace tessera
