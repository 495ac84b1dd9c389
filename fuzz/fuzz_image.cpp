// libFuzzer target: arbitrary bytes as a program image, run on the simulator.
//
// Each input is used three ways:
//   1. as a binary image, read with isa::read_image;
//   2. behind a valid magic and version (so mutations reach the header fields and sections);
//   3. as a recipe for a program of VALID bundles (random bytes almost never encode one): every
//      8 input bytes seed one instruction for a slot they choose (isa::RandomBundleGenerator), so
//      a mutation changes one instruction; the program ends with halt and is written to an image
//      and read back.
// Every program that reads successfully runs on the timed core and on the functional interpreter
// of configs/small.json with a small bundle limit.
// Property (a violation traps, which libFuzzer reports as a crash): reading and running end
// normally or with a tessera::Error (a bad image, a simulated fault, the bundle limit), never with
// a failed internal check, another exception, a sanitizer report or a hang.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/core.h"
#include "core/functional.h"
#include "core/spec.h"
#include "fuzz_support.h"
#include "isa/encoding.h"
#include "isa/image.h"
#include "isa/operands.h"
#include "isa/random_bundle.h"

namespace {

using namespace tessera;
using fuzz::crash;
using fuzz::survives;

constexpr int64_t kMaxBundles = 20'000;
constexpr size_t kMaxProgramBytes = 64 * 1024;  // larger inputs only go through read_image

const core::CoreSpec& spec() {
  static const core::CoreSpec s =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/small.json");
  return s;
}

void run_program(const isa::Program& p) {
  core::TimedOptions timed;
  timed.max_bundles = kMaxBundles;
  survives([&] { core::Core(spec(), p, timed).run(); });
  core::RunOptions functional;
  functional.max_bundles = kMaxBundles;
  survives([&] { core::FunctionalCore(spec(), p, functional).run(); });
}

void read_and_run(std::span<const uint8_t> bytes) {
  isa::Program p;
  if (survives([&] { p = isa::read_image(bytes, "fuzz.img"); })) run_program(p);
}

// Instruction i comes from input bytes [8i, 8i + 8): their value seeds a generator that picks
// the slot and a valid instruction for it; bit 7 of the first byte ends the bundle after it.
isa::Program program_from_recipe(std::span<const uint8_t> bytes) {
  const int instrs = static_cast<int>(bytes.size() / 8);
  isa::RandomBundleOptions opt;
  opt.scalar_regs = spec().scalar_regs;
  opt.vector_regs = spec().vector_regs;
  opt.mask_regs = spec().mask_regs;
  opt.max_target = instrs;
  isa::Program p;
  isa::Bundle bundle;
  std::vector<isa::RegRef> written;
  auto close = [&] {
    p.code.push_back(bundle);
    bundle = {};
    written.clear();
  };
  for (int i = 0; i < instrs; ++i) {
    const uint64_t seed = isa::load_le64(bytes.data() + 8 * static_cast<size_t>(i));
    isa::RandomBundleGenerator gen(seed, opt);
    const auto slot = static_cast<isa::Slot>(gen.below(isa::kNumSlots));
    const isa::Instr in = gen.instr_for(slot);
    bool clash = bundle[slot].op != isa::Opcode::NOP;
    for (const isa::RegRef& r : isa::written_registers(in))
      for (const isa::RegRef& w : written) clash |= r == w;
    if (!clash) {
      bundle[slot] = in;
      for (const isa::RegRef& r : isa::written_registers(in)) written.push_back(r);
    }
    if (bytes[8 * static_cast<size_t>(i)] & 0x80) close();
  }
  if (bundle != isa::Bundle{}) close();
  isa::Bundle halt;
  halt[isa::Slot::S0].op = isa::Opcode::HALT;
  p.code.push_back(halt);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  read_and_run(bytes);

  std::vector<uint8_t> image(isa::kImageMagic, isa::kImageMagic + sizeof isa::kImageMagic);
  uint8_t version[4];
  isa::store_le32(version, isa::kImageVersion);
  image.insert(image.end(), version, version + 4);
  image.insert(image.end(), data, data + size);
  read_and_run(image);

  if (size <= kMaxProgramBytes) {
    const isa::Program p = program_from_recipe(bytes);
    std::vector<uint8_t> encoded;
    if (!survives([&] { encoded = isa::write_image(p); })) crash();  // valid bundles must encode
    read_and_run(encoded);
  }
  return 0;
}
