// libFuzzer target: arbitrary bytes as a mapper system file (JSON).
// Properties: parse_system_json ends normally or with a tessera::Error (fuzz_support.h); a system
// it accepts is consistent (validate passes, every processor has its occupancy map).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "mapper/system.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  mapper::SystemSpec s;
  if (!fuzz::survives([&] {
        s = mapper::parse_system_json(std::string(fuzz::as_text(data, size)), "fuzz.json");
      }))
    return 0;
  fuzz::check(fuzz::survives([&] { mapper::validate(s, "fuzz.json"); }));
  fuzz::check(s.total_cores() <= mapper::kMaxCores);
  fuzz::check(s.total_free_cores() >= 0 && s.total_free_cores() <= s.total_cores());
  return 0;
}
