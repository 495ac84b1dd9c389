// Drives a GEMM through both MXU models for the fidelity tests: the fast model (core::Mxu) with
// every op issued as early as its *_ready allows, and the slow systolic model with the same tiles.
//
// Tiling: C[M x N] = A[M x K] * B[K x N]; weight tiles (kt, nt) of R x C in the order nt-major,
// kt-minor; every tile gets all M rows of A (padded to a multiple of sublanes), K and N padded with
// zeros. K > R continues the fp32 chain through the accumulator blocks (mmul.st / mmul.acc /
// mmul.acc.out), so every output is one fma chain over k = 0..K-1 (numerics/matmul.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/mxu.h"
#include "core/spec.h"
#include "systolic_model.h"

namespace tessera::mxutest {

struct GemmCase {
  int M, K, N;
  std::vector<float> a;  // M x K fp32 (not yet rounded to bf16)
  std::vector<float> b;  // K x N
};

GemmCase random_gemm(int M, int K, int N, uint32_t seed);

// A CoreSpec with an R x C array, `sublanes` rows per push and enough accumulator blocks.
core::CoreSpec mxu_spec(int R, int C, int sublanes, bool double_buffer);

struct FastRun {
  std::vector<float> c;  // M x N
  core::MxuStats stats;
};

// The fast model, each op issued at the earliest cycle its unit allows (weight stream: mlw...,
// mflip; input stream: mmul...; in-order within a stream, mflip after the previous tile's pushes).
FastRun run_fast(const core::CoreSpec& spec, const GemmCase& g);

struct SlowRun {
  std::vector<float> c;  // M x N
  SystolicRun run;
};

SlowRun run_slow(const core::CoreSpec& spec, const GemmCase& g);

// numerics::mxu_matmul_accumulate over the full K on the bf16-rounded operands.
std::vector<float> reference_gemm(const GemmCase& g);

}  // namespace tessera::mxutest
