#include "graph/tensor.h"

#include <limits>

namespace tessera::graph {

const char* dtype_name(DType t) {
  return t == DType::kF32 ? "f32" : "i32";
}

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

}  // namespace tessera::graph
