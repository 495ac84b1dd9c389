#include "graph/zoo_layers.h"

#include "common/error.h"

namespace tessera::graph {

void require_at_least(const std::string& where, int64_t value, int64_t least, const char* what) {
  if (value < least)
    throw Error(where, std::string(what) + " must be >= " + std::to_string(least) + ", got " +
                           std::to_string(value));
}

void require_heads_divide(const std::string& where, int64_t heads, int64_t d_model) {
  if (d_model % heads != 0)
    throw Error(where, "heads (" + std::to_string(heads) + ") must divide d_model (" +
                           std::to_string(d_model) + ")");
}

int add_linear(Graph& g, int x, int w, int b, const std::string& name, const std::string& value) {
  const int xw = g.add_node(OpKind::kMatMul, {x, w}, {}, name + ".matmul");
  return g.add_node(OpKind::kAdd, {xw, b}, {}, value.empty() ? name : value);
}

}  // namespace tessera::graph
