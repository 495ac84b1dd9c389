// Reading an ONNX model file into libonnx's generated ModelProto.
//
// Contract of load_model_file:
//   * The file is at most kMaxModelBytes (protobuf's own limit) and parses as a ModelProto with a
//     graph; otherwise Error "<path>: not an ONNX model (...)".
//   * The default-domain opset ("" or "ai.onnx") is between kMinOpset and kMaxOpset, or below
//     kMinOpset with no node whose op type's schema changed between that opset and kMinOpset
//     (so its nodes mean what they mean at kMinOpset: GlobalAveragePool-1 models); otherwise
//     Error naming the opset (and every changed node). Nodes of other domains are left to the
//     importer (reported as unsupported there).
//   * Every initializer stored as external data is read from its `location` (relative to the
//     model file's directory; `offset` and `length` honoured) into raw_data; a missing or short
//     file is an Error naming the tensor and the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <onnx/onnx_pb.h>

namespace tessera::onnx_import {

inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 17;
inline constexpr int64_t kMaxModelBytes = int64_t{2} << 30;

struct ModelFile {
  std::string path;
  onnx::ModelProto proto;
  int64_t opset = 0;  // the default domain's
};

ModelFile load_model_file(const std::string& path);
// The same checks on bytes already in memory; external data is resolved against `dir`.
ModelFile parse_model(std::string_view bytes, const std::string& name, const std::string& dir);

}  // namespace tessera::onnx_import
