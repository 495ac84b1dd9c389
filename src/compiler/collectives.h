// The collective library: index-driven exchange programs (spec/exchange.md, S1110-S1130).
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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/exchange.h"
#include "isa/image.h"

namespace tessera::compiler {

enum class CollectiveKind : uint8_t { kAllReduce, kAllGather, kBroadcast };

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int processors = 1;
  uint32_t base = 0;   // vmem word address of the vector
  uint32_t words = 0;  // vector length in words
  core::XCombine combine = core::XCombine::Add;  // all-reduce: Add or Max
  int rings = 1;       // virtual rings per direction (1..6)
  int directions = 1;  // 1 or 2
  int root = 0;        // broadcast
  // Embedding the code in a larger program (compiler/data_parallel.h): every label is prefixed
  // with `label_prefix`, and with halt = false the code falls through at its end instead of halting.
  std::string label_prefix;
  bool halt = true;
  // Ring steps end in `xsync` ... `xwait` instead of `sync` (core/exchange.h): the next step's
  // fragment indices are computed while the exchange travels. Same sends, same values.
  bool split_phase = false;
};

// Checks the spec (Error naming the field): processors >= 1, rings 1..6, directions 1..2, root in
// range, combine Add/Max.
void validate(const CollectiveSpec& spec);

// Assembly text of the one image (index-driven) and of processor p's specialised program.
std::string collective_asm(const CollectiveSpec& spec);
std::string collective_asm_for(const CollectiveSpec& spec, int processor);
isa::Program collective_program(const CollectiveSpec& spec);
isa::Program collective_program_for(const CollectiveSpec& spec, int processor);  // index word = processor

// Host reference: the vector every processor holds afterwards, given each processor's vector
// (inputs[p], `words` words each). Same combine order as the programs (see above).
std::vector<uint32_t> collective_reference(const CollectiveSpec& spec, const std::vector<std::vector<uint32_t>>& inputs);

// [begin, end) of part i when `total` is cut into `parts` (the first total % parts one longer).
std::pair<uint32_t, uint32_t> split_range(uint32_t total, int parts, int i);

}  // namespace tessera::compiler
