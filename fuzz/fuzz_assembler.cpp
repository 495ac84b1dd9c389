// libFuzzer target: arbitrary bytes as assembly text, and as a program image.
//
// Properties checked (a violation traps, which libFuzzer reports as a crash):
//   - assemble (of a fragment or a whole program) never fails other than with tessera::Error;
//   - a program that assembles survives disassemble -> assemble bit-identically (code, data,
//     index) and write_image -> read_image exactly (debug info included);
//   - read_image on the same bytes (as given, and behind a valid magic and version) either throws
//   tessera::Error or yields a program that
//     disassembles and rewrites to an equal program;
//   - a random program generated from the first bytes as a seed survives disassemble -> assemble.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/image.h"
#include "isa/random_bundle.h"

namespace {

using namespace tessera;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void fuzz_text(std::string_view text) {
  isa::AsmOptions whole;
  whole.whole_program = true;
  try {
    (void)isa::assemble(text, "fuzz-whole.s", whole);
  } catch (const Error&) {
  }
  isa::Program p;
  try {
    p = isa::assemble(text, "fuzz.s");
  } catch (const Error&) {
    return;
  }
  isa::Program q = isa::assemble(isa::disassemble(p), "fuzz-disassembled.s");
  check(q.without_debug() == p.without_debug());
  check(isa::read_image(isa::write_image(p)) == p);
}

void fuzz_image(std::span<const uint8_t> bytes) {
  isa::Program p;
  try {
    p = isa::read_image(bytes, "fuzz.bin");
  } catch (const Error&) {
    return;
  }
  (void)isa::disassemble(p);
  check(isa::read_image(isa::write_image(p)) == p);
}

// A program of seeded random bundles and data: must survive disassemble -> assemble exactly.
void fuzz_generated(std::span<const uint8_t> bytes) {
  if (bytes.size() < 9) return;
  isa::Program p = isa::random_program(isa::load_le64(bytes.data()), 1 + bytes[8] % 16);
  check(isa::assemble(isa::disassemble(p), "generated.s").without_debug() == p);
  check(isa::read_image(isa::write_image(p)) == p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_text(std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz_image(std::span(data, size));
  fuzz_generated(std::span(data, size));
  // The same bytes after a valid magic and version, so mutations reach the header and sections.
  std::vector<uint8_t> image(isa::kImageMagic, isa::kImageMagic + sizeof isa::kImageMagic);
  uint8_t version[4];
  isa::store_le32(version, isa::kImageVersion);
  image.insert(image.end(), version, version + 4);
  image.insert(image.end(), data, data + size);
  fuzz_image(image);
  return 0;
}
