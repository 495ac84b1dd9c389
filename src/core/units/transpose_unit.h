// The transpose unit (XU): xpush vA pushes slice j (rows j*S .. j*S+S-1) of an L x L matrix M
// (rows >= L of a partial last slice ignored); the ceil(L/S)-th slice completes M and makes
// ceil(L/S) output slices of M^T, slice j holding rows j*S + s of M^T (zero rows beyond L); xpop
// pops the next output slice into vD. (S sublanes, L lanes.)
// Timing: each xpush occupies the input S cycles (waiting for it: StallCause::XuBusy); the
// completing slice's output slices are ready at start + S - 1 + latency(transpose); pops as
// FifoUnit. Pending input slices and unpopped output slices together may not exceed core.xu.fifo
// (an xpush beyond faults). Config: core.xu.fifo.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units/fifo_unit.h"

namespace tessera::core {

class TransposeUnit final : public FifoUnit {
 public:
  explicit TransposeUnit(const UnitEnv& env);
  static void read_spec(ConfigReader& reader, CoreSpec& spec);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;

 private:
  void push_slice(const uint32_t* slice, int64_t ready);

  std::vector<uint32_t> m_matrix;  // lanes x lanes, rows filled by pending slices
  int m_pending = 0;               // slices of the current matrix pushed so far
  int m_slices;                    // ceil(lanes / sublanes)
};

}  // namespace tessera::core
