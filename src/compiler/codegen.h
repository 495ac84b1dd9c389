// Codegen: the instruction-level helpers every lowering uses, on top of the Emitter: rotating
// register pools, DMA requests with their scalar operands, DMA descriptors in scalar memory, and
// vector-memory loads/stores with the rows they touch.
//
// Register convention of the compiled program: s0 = 0 (every address is s0 + immediate), s28 the
// stride of strided loads; v0..v7 per-kernel constants; v8.. the rotating pool. All DMAs use flag
// 0; wait_dmas() waits for every DMA issued since the last wait. GEMM kernels (kernels/gemm) are
// appended whole; they use vector memory from row 0 and flags 0..2 and leave every flag at 0.
//
// Hand-laid code (collectives, the pipelined Adam program, the gradient all-reduce): put() lays
// each instruction in a bundle of its own (join() into the last one), branches go to labels, and
// registers that live across the code come from a HeldRegs pool instead of a fixed convention.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "compiler/emitter.h"
#include "core/spec.h"
#include "isa/image.h"

namespace tessera::compiler {

inline constexpr int kRegZero = 0;
inline constexpr int kRegStride = 28;  // s28, s29: strides of strided loads
inline constexpr int kRegStride2 = 29;
inline constexpr int kConstRegs = 8;
inline constexpr int kRegLoopOuter = 31;  // s31, s30: counters of loop_begin / loop_end
inline constexpr int kRegLoopInner = 30;
inline constexpr int kRegCursor = 20;  // s20: a kernel's loop cursor (a temporary between kernels)
// Scalar memory: words [0, kDescriptorWords) hold the DMA descriptors (more grow down from the
// top); appended kernels' data follow (next_smem()) up to the lowest descriptor there.
inline constexpr int64_t kDescriptorWords = 256;

// Scalar registers held across hand-laid code (indices and counters that live between
// supersteps): take() hands out the lowest free register of [first, last], take_top() the highest
// (short-lived helpers take from the top, so they stay clear of long-lived registers); give()
// returns one. Error when none is free or a register is returned twice.
class HeldRegs {
 public:
  HeldRegs(int first, int last);
  int take();
  int take_top();
  void give(int reg);

 private:
  int m_first;
  std::vector<bool> m_held;
};

class Codegen {
 public:
  // With `zero_s0` (compiled kernels): checks the register files and starts with `sli s0, 0`.
  // Without: an empty program for hand-laid code.
  explicit Codegen(const core::CoreSpec& spec, bool zero_s0 = true);
  Codegen(core::CoreSpec&&, bool = true) = delete;  // keeps a reference: no temporaries

  const core::CoreSpec& spec() const { return m_spec; }
  Emitter& em() { return m_em; }
  int words_per_vreg() const { return m_spec.sublanes * m_spec.lanes; }

  int vreg();  // next register of the rotating pool
  int sreg();
  // Both rotating pools start over (where no pool register holds a live value): repeated code
  // then uses the same registers in every repetition, so the emitter can roll it into a loop.
  void restart_pools() {
    m_next_v = kConstRegs;
    m_next_s = 1;
  }

  // sD = imm
  void sli(int reg, int64_t value);
  // One DMA (flag 0); for 2-D ones `count_or_desc` is the descriptor's smem address.
  void dma(isa::Opcode op, int64_t dst, int64_t src, int64_t count_or_desc);
  uint32_t descriptor(int64_t count, int64_t chunk, int64_t src_stride, int64_t dst_stride);
  void wait_dmas();
  // One DMA whose operands are already in registers (for loop bodies); the caller declares the
  // vector-memory rows it writes with touch_rows().
  void dma_regs(isa::Opcode op, int d, int a, int b);
  void touch_rows(int64_t row_end) { touch(row_end); }

  // Counted loops, at most two nested: loop_begin emits `sli sC, trips` (s31 outer, s30 inner)
  // and starts the body at a new bundle; loop_end puts `loop sC, top` in the body's last bundle.
  // The body is emitted once and runs `trips` times, so it reaches per-trip data only through
  // registers it advances itself. Its DMAs count `trips` times toward the next wait_dmas(); it
  // must not wait itself.
  void loop_begin(int64_t trips);
  void loop_end();

  void vld(int v, int64_t row);
  // sublane s from row + s * stride; `stride_reg` must hold `stride`.
  void vld_strided(int v, int64_t row, int stride_reg, int stride);
  void vst(int v, int64_t row);
  // row + s * stride = sublane s; `stride_reg` must hold `stride`.
  void vst_strided(int v, int64_t row, int stride_reg, int stride);
  void op(isa::Opcode op, int d, int a = 0, int b = 0, int c = 0, int32_t imm = 0);
  // A vector-memory op whose address is known at run time only (a register base): it may touch
  // rows [row_lo, row_hi], which orders it against the other accesses there.
  void op_rows(isa::Opcode op, int d, int a, int b, int c, int32_t imm, int64_t row_lo,
               int64_t row_hi);

  // Hand-laid code (see above); operands go to the fields d, a, b, c, imm as the operand
  // signatures in isa/opcodes.def place them.
  void put(isa::Opcode op, int d = 0, int a = 0, int b = 0, int c = 0, int32_t imm = 0);
  void put(const isa::Instr& in) { put(in.op, in.d, in.a, in.b, in.c, in.imm); }
  void join(isa::Opcode op, int d = 0, int a = 0, int b = 0, int c = 0, int32_t imm = 0);
  int label() { return m_em.new_label(); }
  void bind(int label) { m_em.bind(label); }
  // beq/bne/bge sA, sB, label; loop sA, label; jmp label.
  void put_branch(isa::Opcode op, int a, int b, int label);
  // While a Packed lives, put() goes through the list scheduler instead (straight-line code that
  // starts where hand-laid code ended: its instructions packed into as few bundles as their
  // dependences allow).
  class Packed {
   public:
    explicit Packed(Codegen& cg) : m_cg(cg) { m_cg.m_packed = true; }
    ~Packed() { m_cg.m_packed = false; }
    Packed(const Packed&) = delete;
    Packed& operator=(const Packed&) = delete;

   private:
    Codegen& m_cg;
  };

  // GEMM or other pre-scheduled code; its scalar-memory data go to the program. `vmem_rows`: the
  // vector-memory rows [0, vmem_rows) it touches (-1: its vld/vst [s0+imm] operands tell).
  void append(const isa::Program& kernel, int64_t vmem_rows = -1);
  int64_t next_smem() const { return m_smem_next; }
  // Scalar-memory words [at, at + words) for a kernel's run-time data (ids loaded by DMA); later
  // appended kernels' data go after them. Error when the scalar memory is too small.
  int64_t reserve_smem(int64_t words);
  // Highest vector-memory row + 1 any kernel touched so far (loads, stores, DMA destinations).
  int64_t vmem_peak_rows() const { return m_vmem_peak; }

  // After waiting for the DMAs still pending: whether finish()'s program fits instruction memory.
  bool fits_imem();
  isa::Program finish();

 private:
  const core::CoreSpec& m_spec;
  Emitter m_em;
  bool m_packed = false;
  int m_next_v = kConstRegs, m_next_s = 1;
  int64_t m_pending = 0;
  struct LoopFrame {
    int64_t top, trips, pending;
    int counter;
  };
  std::vector<LoopFrame> m_loops;
  std::vector<uint32_t> m_smem;
  std::map<std::array<uint32_t, 4>, uint32_t> m_descriptors;
  int64_t m_smem_next;
  std::vector<isa::DataSegment> m_data;
  int64_t m_vmem_peak = 0;
  void touch(int64_t row_end) { m_vmem_peak = std::max(m_vmem_peak, row_end); }
};

}  // namespace tessera::compiler
