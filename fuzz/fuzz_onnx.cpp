// libFuzzer target: arbitrary bytes as an ONNX model (src/onnx/model_file.h, importer.h).
// Properties: reading and importing end normally or with a tessera::Error (fuzz_support.h); an
// imported graph verifies, and its outputs, inputs and parameter values agree with it.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  onnx_import::ImportedModel m;
  if (!fuzz::survives([&] {
        m = onnx_import::import_model(
            onnx_import::parse_model(fuzz::as_text(data, size), "fuzz.onnx", "/nonexistent"));
      }))
    return 0;
  m.graph.verify();
  fuzz::check(m.params.size() == m.graph.params().size());
  for (size_t k = 0; k < m.params.size(); ++k)
    fuzz::check(static_cast<int64_t>(m.params[k].size()) ==
                graph::num_elements(m.graph.value(m.graph.params()[k]).shape));
  for (const auto& in : m.inputs) fuzz::check(in.value >= 0);
  return 0;
}
