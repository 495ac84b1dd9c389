// The collective-algorithm interface of the collective library (collectives.h), internal to
// compiler/: an algorithm is its program, its single supersteps and its host reference. The ring
// (collectives_ring.cpp: all-reduce, all-gather, broadcast) and the torus (collectives_torus.cpp:
// all-reduce) implement it; make_collective() picks one after validate().
//
// The code is hand-laid through the Codegen (one instruction per bundle, labels for branches) so
// that its timing does not depend on the list scheduler; the registers it keeps across supersteps
// come from the caller's HeldRegs pool (CollectiveRegs takes them in a fixed order, so the same
// spec always gets the same registers) and go back when the code is emitted.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "compiler/codegen.h"
#include "compiler/collectives.h"

namespace tessera::compiler {

// The most chunks (rings x directions) a spec may have.
inline constexpr int kMaxChunks = 12;

class CollectiveAlgorithmCode {
 public:
  virtual ~CollectiveAlgorithmCode() = default;
  // Supersteps of the whole exchange (collective_supersteps()).
  virtual int supersteps() const = 0;
  // The whole collective, falling through at its end; processor < 0: the index from %pid (the one
  // image), else the index as a constant.
  virtual void emit(Codegen& cg, HeldRegs& regs, int processor) const = 0;
  // Superstep `step` alone, self-contained and straight-line, without the sync that must follow
  // (collective_step_asm()'s contract). All-reduce only.
  virtual void emit_superstep(Codegen& cg, HeldRegs& regs, int step, int processor) const = 0;
  // The vector every processor holds afterwards (collective_reference()).
  virtual std::vector<uint32_t> reference(
      const std::vector<std::vector<uint32_t>>& inputs) const = 0;
};

// The algorithm of a validated spec.
std::unique_ptr<CollectiveAlgorithmCode> make_collective(const CollectiveSpec& spec);
std::unique_ptr<CollectiveAlgorithmCode> make_ring_collective(const CollectiveSpec& spec);
std::unique_ptr<CollectiveAlgorithmCode> make_torus_collective(const CollectiveSpec& spec);

// The torus grid's dimensions (spec.grid, or {processors} when it is empty), and the torus part of
// validate() (Error naming the field).
std::vector<int> torus_dims(const CollectiveSpec& spec);
void validate_torus(const CollectiveSpec& spec);

// The scalar registers both algorithms keep while their code is emitted, taken from the pool in
// this order and given back by the destructor: the processor index, n (ring) or the processor's
// coordinate a_i (torus), the ring neighbours, a temporary, the superstep counter, three
// temporaries of the sends, one fragment index per possible chunk, and the torus' segment start
// per direction.
struct CollectiveRegs {
  explicit CollectiveRegs(HeldRegs& pool);
  ~CollectiveRegs();
  CollectiveRegs(const CollectiveRegs&) = delete;
  CollectiveRegs& operator=(const CollectiveRegs&) = delete;

  HeldRegs& pool;
  int pid, n_or_coord, next, prev, tmp, steps;
  std::array<int, 3> t;
  std::array<int, kMaxChunks> frag;
  std::array<int, 2> segment;
};

// pid = %pid (processor < 0) or the constant processor.
void emit_load_pid(Codegen& cg, int pid, int processor);

// The send op of an all-reduce's reduce-scatter (xsend.add / xsend.max).
isa::Opcode reduce_send_op(const CollectiveSpec& spec);

// `trips` ring supersteps as a counted loop on `counter`: in each, send(c) for every chunk c, each
// followed by advance(c) (the chunk's next fragment index), then `sync`; with split_phase the
// advances go between `xsync` and `xwait` instead, computed while the exchange travels.
template <typename Send, typename Advance>
void emit_ring_phase(Codegen& cg, const CollectiveSpec& spec, int counter, int trips, Send send,
                     Advance advance) {
  const int chunks = spec.rings * spec.directions;
  cg.put(isa::Opcode::SLI, counter, 0, 0, 0, trips);
  const int top = cg.label();
  cg.bind(top);
  for (int c = 0; c < chunks; ++c) {
    send(c);
    if (!spec.split_phase) advance(c);
  }
  if (spec.split_phase) {
    cg.put(isa::Opcode::XSYNC);
    for (int c = 0; c < chunks; ++c) advance(c);
    cg.put(isa::Opcode::XWAIT);
  } else {
    cg.put(isa::Opcode::SYNC);
  }
  cg.put_branch(isa::Opcode::LOOP, counter, 0, top);
}

}  // namespace tessera::compiler
