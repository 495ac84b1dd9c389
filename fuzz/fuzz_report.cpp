// libFuzzer target: arbitrary bytes as a report given to `tessera report`: classified by its
// format tag, then every section built from it; and the same bytes as a `--trace` file.
// Property: ends normally or with a tessera::Error (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "htmlreport/input.h"
#include "htmlreport/page.h"
#include "htmlreport/timeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::survives([&] {
    const htmlreport::Input in = htmlreport::parse_input("fuzz.json", text);
    (void)htmlreport::render_page(htmlreport::page_data({in}, nullptr), "");
  });
  fuzz::survives([&] { (void)htmlreport::parse_timeline("fuzz-trace.json", text); });
  return 0;
}
