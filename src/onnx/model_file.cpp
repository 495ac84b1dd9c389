#include "onnx/model_file.h"

#include <filesystem>
#include <fstream>

#include <onnx/defs/schema.h>

#include "common/error.h"
#include "common/file_io.h"

namespace tessera::onnx_import {

namespace {

// A model below kMinOpset is read as it is when none of its default-domain nodes has an op type
// whose schema changed between the model's opset and kMinOpset (ONNX's schema registry): its
// nodes then mean what they mean at kMinOpset. Otherwise one Error lists every such node.
void check_unchanged_since(const onnx::ModelProto& m, int64_t opset, const std::string& name) {
  std::string changed;
  int count = 0;
  for (const auto& n : m.graph().node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const auto* then = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset));
    const auto* now = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(kMinOpset));
    if (then != nullptr && now != nullptr && then->SinceVersion() == now->SinceVersion()) continue;
    const std::string why =
        then == nullptr ? "not in opset " + std::to_string(opset)
                        : "changed in opset " +
                              std::to_string(now != nullptr ? now->SinceVersion() : kMinOpset);
    changed += (changed.empty() ? "" : ", ") + n.op_type() + " '" + n.name() + "' (" + why + ")";
    ++count;
  }
  if (count > 0)
    throw Error(name, "opset " + std::to_string(opset) + " is not supported (opsets " +
                          std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                          " are, and older ones whose ops did not change since): " +
                          std::to_string(count) + " node(s) differ: " + changed);
}

int64_t default_opset(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      if (o.version() < 1 || o.version() > kMaxOpset)
        throw Error(name, "opset " + std::to_string(o.version()) + " is not supported (opsets " +
                              std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                              " are)");
      if (o.version() < kMinOpset) check_unchanged_since(m, o.version(), name);
      return o.version();
    }
  throw Error(name, "not an ONNX model: no opset_import for the default domain");
}

// Reads `length` bytes (all to the end when absent) at `offset` of the external file.
std::string read_external(const onnx::TensorProto& t, const std::string& name,
                          const std::string& dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") offset = std::stoll(kv.value());
    if (kv.key() == "length") length = std::stoll(kv.value());
  }
  const std::string where = name + ": tensor '" + t.name() + "'";
  if (location.empty()) throw Error(where, "external data without a location");
  const std::string path = (std::filesystem::path(dir) / location).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(where, "external data file '" + path + "' cannot be opened");
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (offset < 0 || offset > size || (length >= 0 && offset + length > size))
    throw Error(where, "external data file '" + path + "' holds " + std::to_string(size) +
                           " bytes; the tensor needs [" + std::to_string(offset) + ", " +
                           std::to_string(length < 0 ? size : offset + length) + ")");
  std::string bytes(static_cast<size_t>(length < 0 ? size - offset : length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw Error(where, "cannot read external data file '" + path + "'");
  return bytes;
}

}  // namespace

ModelFile parse_model(std::string_view bytes, const std::string& name, const std::string& dir) {
  if (static_cast<int64_t>(bytes.size()) > kMaxModelBytes)
    throw Error(name, "not an ONNX model: " + std::to_string(bytes.size()) +
                          " bytes exceed protobuf's 2 GiB limit (use external data)");
  ModelFile f;
  f.path = name;
  if (!f.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(name, "not an ONNX model (the bytes do not parse as an onnx.ModelProto)");
  if (!f.proto.has_graph() || f.proto.ir_version() <= 0)
    throw Error(name, "not an ONNX model (no graph or no IR version)");
  f.opset = default_opset(f.proto, name);
  for (auto& t : *f.proto.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    t.set_raw_data(read_external(t, name, dir));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  return f;
}

ModelFile load_model_file(const std::string& path) {
  const std::string bytes = read_file(path, "ONNX model");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_model(bytes, path, dir.empty() ? "." : dir);
}

}  // namespace tessera::onnx_import
