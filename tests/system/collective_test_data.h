// Test data and helpers of the collective tests: seeded inputs whose sums depend on their order,
// running a collective on a (functional or timed) system, comparing every processor's vector.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "isa/assembler.h"

namespace tessera::system::collective_test {

// Values of mixed magnitude (so the order of the sum shows in the bits), seeded.
inline std::vector<std::vector<uint32_t>> inputs(int n, uint32_t words, uint64_t seed) {
  std::vector<std::vector<uint32_t>> in(static_cast<size_t>(n));
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& v : in)
    for (uint32_t i = 0; i < words; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const double m = static_cast<double>(x >> 40) / static_cast<double>(1 << 24) - 0.5;
      v.push_back(std::bit_cast<uint32_t>(
          static_cast<float>(std::ldexp(m, static_cast<int>((x >> 20) % 24) - 12))));
    }
  return in;
}

// The all-reduce one superstep at a time (compiler::collective_step_asm) as the overlapped gradient
// buckets run it: after each superstep's sends `xsync`, then other code that overwrites every
// scalar register the collective might have kept, then `xwait`. processor < 0: the one image.
inline isa::Program superstep_program(const compiler::CollectiveSpec& spec, int processor) {
  std::string text;
  for (int k = 0; k < compiler::collective_steps(spec); ++k) {
    text += compiler::collective_step_asm(spec, k, processor) + "  xsync\n";
    for (int r = 1; r < 28; ++r)
      text += "  sli s" + std::to_string(r) + ", " + std::to_string(1000 + r) + "\n";
    text += "  xwait\n";
  }
  return isa::assemble(text + "  halt\n", "<supersteps>");
}

// Runs the collective on a functional or timed system (one rank) and returns every processor's
// vector.
template <typename System>
inline std::vector<std::vector<uint32_t>> run(System& sys, const compiler::CollectiveSpec& spec,
                                              const std::vector<std::vector<uint32_t>>& in) {
  for (int p = 0; p < spec.processors; ++p) {
    auto& core = sys.core(p);
    if constexpr (requires { core.host_state(); })
      std::copy(in[p].begin(), in[p].end(), core.host_state().vmem.data() + spec.base);
    else
      std::copy(in[p].begin(), in[p].end(), core.state().vmem.data() + spec.base);
  }
  sys.run();
  std::vector<std::vector<uint32_t>> out;
  for (int p = 0; p < spec.processors; ++p) {
    const uint32_t* v = sys.core(p).state().vmem.data() + spec.base;
    out.emplace_back(v, v + spec.words);
  }
  return out;
}

inline void expect_all_equal(const std::vector<std::vector<uint32_t>>& got,
                             const std::vector<uint32_t>& want, const std::string& what) {
  for (size_t p = 0; p < got.size(); ++p) ASSERT_EQ(got[p], want) << what << " processor " << p;
}

}  // namespace tessera::system::collective_test
