// Reading a ModelSpec from a small JSON description (format: docs/models.md).
//
// {
//   "name": "tiny_mlp",
//   "input": [784],                     // per-sample shape (NHWC for images: [28, 28, 1])
//   "classes": 10,
//   "layers": [
//     {"op": "dense", "units": 64},
//     {"op": "relu"},
//     {"op": "conv2d", "filters": 8, "kernel": 5, "stride": 1, "pad": 2},
//     {"op": "maxpool2d", "kernel": 2, "stride": 2},
//     {"op": "flatten"}
//   ]
// }
// Errors (tessera::Error) name the file, the entry ("layers[2].kernel") and why: a missing, empty
// or directory path (common/file_io.h), JSON syntax or a number a double cannot hold (with the
// byte offset), missing or unknown keys, wrong types, out-of-range values. Shape problems are
// reported by build_model naming the layer.
#pragma once

#include <string>

#include "graph/model.h"

namespace tessera::graph {

ModelSpec read_model_json(const std::string& path);
// What a command line's --model names: a path ending in ".json" is read as above; anything else
// is a zoo name (zoo_spec: an unknown one is an error listing the known ones).
ModelSpec model_spec(const std::string& name_or_path);
// `origin` names the text in errors (a file path, or "<string>").
ModelSpec parse_model_json(const std::string& text, const std::string& origin);

}  // namespace tessera::graph
