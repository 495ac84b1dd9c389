// A vector-heavy streaming program for measuring simulator speed (bundles per host second):
// a counted loop whose body is `unroll` bundles, each with one vld, two vfma.f32, one vst and
// scalar address arithmetic, software-pipelined so that no bundle waits on a register:
//   bundle j:  vld v[j] <- row (s2 + j*S);  vfma v[8+j] = v[j-4]*a + b;  vfma v[16+j] = v[8+j-4]*a
//   + b;
//              vst v[16+j-4] -> row (s3 + j*S)            (indices mod 8: 4 bundles of latency)
// The load pointer walks a 2^k-row window of vector memory and wraps. Written as assembly text and
// assembled, so it also exercises the assembler.
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"
#include "isa/image.h"

namespace tessera::kernels {

struct VectorStream {
  std::string assembly;
  isa::Program program;
  int64_t bundles_executed = 0;  // bundles the program issues (loop bodies + prologue + halt)
};

// `iterations` loop trips of an 8-bundle body. Needs >= 32 vector registers and 64 * sublanes rows
// of vector memory.
VectorStream make_vector_stream(const core::CoreSpec& spec, int64_t iterations);

}  // namespace tessera::kernels
