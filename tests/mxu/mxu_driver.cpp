#include "mxu_driver.h"

#include <algorithm>
#include <random>

#include "numerics/bf16.h"
#include "numerics/matmul.h"

namespace tessera::mxutest {

namespace {

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

std::vector<float> rounded(const std::vector<float>& x) {
  std::vector<float> r(x);
  for (float& v : r) v = numerics::round_to_bf16(v);
  return r;
}

}  // namespace

GemmCase random_gemm(int M, int K, int N, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  GemmCase g{M, K, N, std::vector<float>(static_cast<size_t>(M) * K),
             std::vector<float>(static_cast<size_t>(K) * N)};
  for (float& v : g.a) v = dist(rng);
  for (float& v : g.b) v = dist(rng);
  return g;
}

core::CoreSpec mxu_spec(int R, int C, int sublanes, bool double_buffer) {
  core::CoreSpec s;
  s.sublanes = sublanes;
  s.lanes = std::max(R, C);
  s.mxu_rows = R;
  s.mxu_cols = C;
  s.mxu_double_buffer = double_buffer;
  s.mxu_result_fifo = 4;
  s.mxu_acc_blocks = 4096;
  return s;
}

FastRun run_fast(const core::CoreSpec& spec, const GemmCase& g) {
  const int S = spec.sublanes, L = spec.lanes, R = spec.mxu_rows, C = spec.mxu_cols;
  const int KT = ceil_div(g.K, R), NT = ceil_div(g.N, C), P = ceil_div(g.M, S);
  const int W = R / S + 1;  // weight-stream ops per tile: R/S mlw, then mflip
  const int64_t tiles = static_cast<int64_t>(KT) * NT;
  core::Mxu mxu(spec);
  FastRun out{std::vector<float>(static_cast<size_t>(g.M) * g.N, 0.0f), {}};
  std::vector<float> v(static_cast<size_t>(S) * L), popped_block(v.size());
  std::vector<std::pair<int, int>> fifo_owner;  // (nt, p) of each pushed result block, in order
  size_t popped = 0;
  auto pop_one = [&](int64_t now) {
    mxu.mpop(popped_block.data(), mxu.mpop_ready(now));
    const auto [nt, p] = fifo_owner[popped++];
    for (int s = 0; s < S && p * S + s < g.M; ++s)
      for (int c = 0; c < C && nt * C + c < g.N; ++c)
        out.c[static_cast<size_t>(p * S + s) * g.N + nt * C + c] =
            popped_block[static_cast<size_t>(s) * L + c];
  };

  int64_t wi = 0, ii = 0, now = 0;
  while (wi < tiles * W || ii < tiles * P) {
    int64_t w_ready = -1, i_ready = -1;
    if (wi < tiles * W) {
      const int64_t T = wi / W, j = wi % W;
      const bool needs_pushes_done = j == W - 1 || (!spec.mxu_double_buffer && j == 0);
      if (!needs_pushes_done || ii >= T * P)
        w_ready = j == W - 1 ? mxu.mflip_ready(now) : mxu.mlw_ready(now);
    }
    if (ii < tiles * P && wi > (ii / P) * W + W - 1) i_ready = mxu.mmul_ready(now);
    const bool weight_first = w_ready >= 0 && (i_ready < 0 || w_ready <= i_ready);
    if (weight_first) {
      now = w_ready;
      const int64_t T = wi / W, j = wi % W;
      if (j == W - 1) {
        mxu.mflip(now);
      } else {
        const int kt = static_cast<int>(T % KT), nt = static_cast<int>(T / KT);
        std::fill(v.begin(), v.end(), 0.0f);
        for (int s = 0; s < S; ++s) {
          const int k = kt * R + static_cast<int>(j) * S + s;
          for (int c = 0; c < C && k < g.K && nt * C + c < g.N; ++c)
            v[static_cast<size_t>(s) * L + c] = g.b[static_cast<size_t>(k) * g.N + nt * C + c];
        }
        mxu.mlw(v.data(), now);
      }
      ++wi;
      continue;
    }
    now = i_ready;
    const int64_t T = ii / P;
    const int p = static_cast<int>(ii % P), kt = static_cast<int>(T % KT),
              nt = static_cast<int>(T / KT);
    std::fill(v.begin(), v.end(), 0.0f);
    for (int s = 0; s < S && p * S + s < g.M; ++s)
      for (int k = 0; k < R && kt * R + k < g.K; ++k)
        v[static_cast<size_t>(s) * L + k] = g.a[static_cast<size_t>(p * S + s) * g.K + kt * R + k];
    core::MmulMode mode = KT == 1        ? core::MmulMode::ToFifo
                          : kt == 0      ? core::MmulMode::Store
                          : kt == KT - 1 ? core::MmulMode::AccumulateOut
                                         : core::MmulMode::Accumulate;
    const bool pushes_result =
        mode == core::MmulMode::ToFifo || mode == core::MmulMode::AccumulateOut;
    if (pushes_result && mxu.fifo_occupancy() == spec.mxu_result_fifo) pop_one(now);
    mxu.mmul(v.data(), mode, p, now);
    if (pushes_result) fifo_owner.emplace_back(nt, p);
    ++ii;
  }
  while (mxu.fifo_occupancy() > 0) pop_one(now);
  out.stats = mxu.stats();
  return out;
}

SlowRun run_slow(const core::CoreSpec& spec, const GemmCase& g) {
  const int S = spec.sublanes, R = spec.mxu_rows, C = spec.mxu_cols;
  const int KT = ceil_div(g.K, R), NT = ceil_div(g.N, C), MP = ceil_div(g.M, S) * S;
  const std::vector<float> a = rounded(g.a), b = rounded(g.b);
  std::vector<SystolicTile> tiles;
  for (int nt = 0; nt < NT; ++nt)
    for (int kt = 0; kt < KT; ++kt) {
      SystolicTile tile{std::vector<float>(static_cast<size_t>(R) * C, 0.0f),
                        std::vector<float>(static_cast<size_t>(MP) * R, 0.0f), nt * MP, kt};
      for (int k = 0; k < R && kt * R + k < g.K; ++k)
        for (int c = 0; c < C && nt * C + c < g.N; ++c)
          tile.weights[static_cast<size_t>(k) * C + c] =
              b[static_cast<size_t>(kt * R + k) * g.N + nt * C + c];
      for (int m = 0; m < g.M; ++m)
        for (int k = 0; k < R && kt * R + k < g.K; ++k)
          tile.inputs[static_cast<size_t>(m) * R + k] =
              a[static_cast<size_t>(m) * g.K + kt * R + k];
      tiles.push_back(std::move(tile));
    }
  SystolicArray array(R, C, spec.mxu_double_buffer);
  SlowRun out{std::vector<float>(static_cast<size_t>(g.M) * g.N, 0.0f), array.run(tiles, NT * MP)};
  for (int m = 0; m < g.M; ++m)
    for (int n = 0; n < g.N; ++n)
      out.c[static_cast<size_t>(m) * g.N + n] =
          out.run.acc[static_cast<size_t>((n / C) * MP + m) * C + n % C];
  return out;
}

std::vector<float> reference_gemm(const GemmCase& g) {
  const std::vector<float> a = rounded(g.a), b = rounded(g.b);
  std::vector<float> c(static_cast<size_t>(g.M) * g.N, 0.0f);
  numerics::mxu_matmul_accumulate_reference(a.data(), g.K, b.data(), g.N, c.data(), g.N, g.M, g.K,
                                            g.N);
  return c;
}

}  // namespace tessera::mxutest
