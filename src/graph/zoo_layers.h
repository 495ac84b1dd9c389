// Graph-building pieces the zoo's model builders (gpt, bert, resnet) share: the checks of a
// spec's sizes, with one wording for every model, and the linear layer.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace tessera::graph {

// Throws Error(where, "<what> must be >= <least>, got <value>") when value < least.
void require_at_least(const std::string& where, int64_t value, int64_t least, const char* what);

// Throws Error(where, "heads (H) must divide d_model (D)") unless heads divides d_model.
void require_heads_divide(const std::string& where, int64_t heads, int64_t d_model);

// x w + b for x [rows, in], w [in, out], b [out] (parameters or constants): the product is the
// node `name`.matmul, the sum the node `value` (`name` when empty).
int add_linear(Graph& g, int x, int w, int b, const std::string& name,
               const std::string& value = "");

}  // namespace tessera::graph
