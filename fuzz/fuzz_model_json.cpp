// libFuzzer target: arbitrary bytes as a JSON model description (docs/models.md).
// Properties: parse_model_json ends normally or with a tessera::Error (fuzz_support.h), and so
// does building the graph of a model it accepts (shape errors name the layer).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "graph/model.h"
#include "graph/model_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  graph::ModelSpec spec;
  if (!fuzz::survives([&] {
        spec = graph::parse_model_json(std::string(fuzz::as_text(data, size)), "fuzz.json");
      }))
    return 0;
  fuzz::survives([&] { (void)graph::build_model(spec, 2); });
  return 0;
}
