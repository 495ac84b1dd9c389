#include "kernels/vector_stream.h"

#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "isa/assembler.h"

namespace tessera::kernels {

VectorStream make_vector_stream(const core::CoreSpec& spec, int64_t iterations) {
  constexpr int kUnroll = 8;
  if (iterations < 1 || iterations > INT32_MAX)
    throw Error("vector stream", "iterations must be in 1..2^31-1");
  if (spec.vector_regs < 32) throw Error("vector stream", "needs 32 vector registers");
  const int64_t S = spec.sublanes;
  const int64_t window = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(32 * S)));
  if (window + kUnroll * S > spec.vmem_rows())
    throw Error("vector stream", "vector memory is too small");

  std::string text =
      fmt::format("// vector stream: {} iterations of {} bundles\n", iterations, kUnroll);
  text += fmt::format("  sli s1, {} ;; sli s2, 0\n", iterations);
  text += fmt::format("  sli s3, {} ;; vbcasti v30, 1.0001f ;; vbcasti v31, 0.5f\n", window);
  for (int j = 0; j < kUnroll; ++j) {
    const int back = (j + kUnroll - 4) % kUnroll;
    std::string line = j == 0 ? "top: " : "  ";
    line += fmt::format(
        "vld v{}, [s2+{}] ;; vfma.f32 v{}, v{}, v30, v31 ;; vfma.f32 v{}, v{}, v30, v31 ;; vst "
        "v{}, [s3+{}]",
        j, j * S, 8 + j, back, 16 + j, 8 + back, 16 + back, j * S);
    if (j == kUnroll - 2) line += fmt::format(" ;; saddi s4, s2, {}", kUnroll * S);
    if (j == kUnroll - 1) line += fmt::format(" ;; sandi s2, s4, {} ;; loop s1, top", window - 1);
    text += line + "\n";
  }
  text += "  halt\n";
  VectorStream out;
  out.assembly = text;
  out.program = isa::assemble(text, "<vector stream>");
  out.bundles_executed = 2 + kUnroll * iterations + 1;
  return out;
}

}  // namespace tessera::kernels
