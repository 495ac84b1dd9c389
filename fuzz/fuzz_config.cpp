// libFuzzer target: arbitrary bytes as a machine config (JSON with comments), read as
// `tessera run --config` reads one: the core and system sections, then the unknown-key check.
// Property: ends normally or with a tessera::Error (fuzz_support.h).
#include <cstddef>
#include <cstdint>

#include "common/config.h"
#include "fuzz_support.h"
#include "system/machine_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  fuzz::survives([&] {
    ConfigReader r = ConfigReader::from_string(fuzz::as_text(data, size), "fuzz.json");
    (void)system::read_machine_spec(r);
    r.finish();
  });
  return 0;
}
