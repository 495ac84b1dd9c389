// The collective library: index-driven exchange programs (docs/system.md).
//
// ONE program image serves every processor: the code reads %pid and computes, at run time, the
// processor to send to, the fragment to send, where it lands and how the receiver combines it
// (core/exchange.h: xsend / xsend.add / xsend.max, sync). The loader patches each processor's copy
// with its index (isa::Program::with_index). For comparison, collective_program_for() compiles a
// program specialised for one processor (the index as a constant): a separate compilation per
// processor, the cost the one-image method avoids.
//
// Layout: the vector is `words` fp32 words at vmem word `base` on every processor. It is cut into
// C = rings * directions chunks (chunk c: words [c*q + min(c, r)), q = words / C, r = words % C,
// the first r chunks one word longer); chunk c travels the ring in direction c % directions
// (0: p -> p+1, 1: p -> p-1, modulo n). Each chunk is cut the same way into n fragments (uneven
// when n does not divide it; fragments may be empty). All chunks move in the same supersteps, so
// with 2 directions both link directions carry data at once.
//
// Algorithms (n processors, steps separated by `sync`):
//   all-reduce = reduce-scatter + all-gather: in step s = 0..n-2 of reduce-scatter, processor p
//     sends fragment (p - s) mod n (forward; (p + s) mod n backward) to its ring successor with
//     xsend.add/.max; then n-1 all-gather steps forward the completed fragments with xsend.
//     Reduction order (defined, bit-reproducible): fragment f is combined along its ring starting
//     at processor f: forward (((x_f + x_{f+1}) + x_{f+2}) + ... + x_{f-1}), backward
//     x_f + x_{f-1} + ... + x_{f+1} (indices mod n; "+" is the combine, receiver's local word
//     first: local + received).
//   all-gather: processor p contributes fragment p (of each chunk, in place); n-1 ring steps.
//   broadcast: the root sends fragment f to processor f (scatter, one superstep; the root
//     branches on its index), then an all-gather.
// n = 1: the program only halts.
//
// algorithm = kTorus (all-reduce only; collectives_torus.cpp; the ring: collectives_ring.cpp): the
// processors seen as a grid d_0 x d_1 x ... x d_{k-1} (`grid`; dimension 0 varies fastest in the
// processor index: p = a_0 + d_0 * (a_1 + d_1 * (a_2 + ...)); e.g. cores-per-chip x X x Y for a 2-D
// torus of chips). Reduce-scatter along the dimension-0 rings, then along dimension 1 on the
// shrinking segment, ..., then all-gather in reverse order: 2 * sum(d_i - 1) supersteps instead of
// 2(n - 1). Layout: each chunk (as above) is cut into n base fragments (as above); processor p's
// segment before phase i is M_i = d_i * ... * d_{k-1} consecutive base fragments, cut into d_i
// sub-segments of M_{i+1}; in the dimension-i ring (its d_i processors differing only in a_i,
// neighbours p +- stride_i with wrap, stride_i = d_0 * ... * d_{i-1}) sub-segment f goes round
// starting at a_i = f exactly as a fragment of the ring above, and processor p keeps sub-segment
// a_i + 1 (forward chunks) or a_i - 1 (backward; mod d_i) as its next segment. Reduction order
// (defined, bit-reproducible): an element whose base fragment has the digits f_0, ..., f_{k-1}
// (the mixed-radix digits of its index, f_0 the most significant, digit i of radix d_i) is
// R_{k-1}, where R_i = the ring combine of dimension i starting at a_i = f_i of the members'
// R_{i-1} ((R(f_i) + R(f_i + 1)) + ... forward, f_i - 1, ... backward; local + received), and
// R_{-1} = the processor's input word. A grid of one dimension {n} is the ring above (same
// fragments, same order, same values). Dimensions of size 1 add nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen.h"
#include "core/exchange.h"
#include "isa/image.h"

namespace tessera::compiler {

enum class CollectiveKind : uint8_t { kAllReduce, kAllGather, kBroadcast };
enum class CollectiveAlgorithm : uint8_t { kRing, kTorus };

// "ring" / "torus", and back (Error naming `where` for another name).
const char* algorithm_name(CollectiveAlgorithm a);
CollectiveAlgorithm algorithm_from_name(const std::string& name, const std::string& where);

// The most processors the torus all-reduce indexes (its coordinates are computed from %pid by
// multiplying and shifting in 32 bits).
inline constexpr int kMaxTorusProcessors = 32768;

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int processors = 1;
  uint32_t base = 0;                             // vmem word address of the vector
  uint32_t words = 0;                            // vector length in words
  core::XCombine combine = core::XCombine::Add;  // all-reduce: Add or Max
  int rings = 1;                                 // virtual rings per direction (1..6)
  int directions = 1;                            // 1 or 2
  int root = 0;                                  // broadcast
  // Ring steps end in `xsync` ... `xwait` instead of `sync` (core/exchange.h): the next step's
  // fragment indices are computed while the exchange travels. Same sends, same values.
  bool split_phase = false;
  // All-reduce algorithm (see above). kTorus: `grid` = the dimensions (dimension 0 fastest in the
  // processor index; product = processors); empty: one dimension of all processors.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<int> grid;
};

// Supersteps of the exchange: ring 2(n - 1) (all-gather n - 1; broadcast n); torus
// 2 * sum(d_i - 1).
int collective_supersteps(const CollectiveSpec& spec);

// Checks the spec (Error naming the field): processors >= 1, rings 1..6, directions 1..2, root in
// range, combine Add/Max; grid only with the torus algorithm, which is for all-reduce only, has
// every dimension >= 1, their product = processors, and at most kMaxTorusProcessors.
void validate(const CollectiveSpec& spec);

// The one image (index-driven) and processor p's specialised program (index word = p); the
// code is hand-laid through the Codegen (compiler/collective_algorithm.h).
isa::Program collective_program(const CollectiveSpec& spec);
isa::Program collective_program_for(const CollectiveSpec& spec, int processor);
// Their assembly text (the disassembly), for reading and for tests.
std::string collective_asm(const CollectiveSpec& spec);
std::string collective_asm_for(const CollectiveSpec& spec, int processor);

// The collective inside a larger program: emitted into `cg` where it stands, falling through at
// its end (processor < 0: the index from %pid). The registers it keeps come from `regs` and go
// back to it afterwards.
void emit_collective(Codegen& cg, HeldRegs& regs, const CollectiveSpec& spec, int processor = -1);

// The all-reduce one superstep at a time, for code that puts other work between its supersteps
// (compiler/data_parallel.h, bucketed overlap): collective_steps() = collective_supersteps()
// (ring: 2(n-1), n-1 reduce-scatter and n-1 all-gather; torus: 2 * sum(d_i - 1); Error for other
// kinds); emit_collective_step(cg, regs, spec, k) = superstep k's sends (the same sends as
// superstep k of collective_program, so the same values), without the sync that must follow.
// Self-contained and straight-line: %pid, the neighbours, the torus segment starts and the
// fragment indices are recomputed from the index and k (processor >= 0: the index as a constant);
// nothing stays in registers between supersteps. collective_step_asm: its assembly text.
int collective_steps(const CollectiveSpec& spec);
void emit_collective_step(Codegen& cg, HeldRegs& regs, const CollectiveSpec& spec, int step,
                          int processor = -1);
std::string collective_step_asm(const CollectiveSpec& spec, int step, int processor = -1);

// Host reference: the vector every processor holds afterwards, given each processor's vector
// (inputs[p], `words` words each). Same combine order as the programs (see above).
std::vector<uint32_t> collective_reference(const CollectiveSpec& spec,
                                           const std::vector<std::vector<uint32_t>>& inputs);

// The combine of the collectives: local (the receiver's word) combined with received (fp32 bits).
uint32_t combine_words(core::XCombine c, uint32_t local, uint32_t received);

// [begin, end) of part i when `total` is cut into `parts` (the first total % parts one longer).
std::pair<uint32_t, uint32_t> split_range(uint32_t total, int parts, int i);

}  // namespace tessera::compiler
