// Generation programs of the `gpt` model (graph/gpt_model.h) on one core: a prefill program and
// decoding-step programs that keep the keys and values of every position in an HBM-resident KV
// cache, appended by each program and never recomputed. Bit for bit the arithmetic of the host
// reference graph::GptDecoder (graph/gpt_decode.h) in chip numerics.
//
// HBM layout, fixed for a model (every program of one generation run uses the same words):
//   params        each parameter of build_gpt(spec, 1).params, in that order
//   keys, values  per layer l and head h a [context, d_head] region at
//                 base + ((l * heads + h) * context) * d_head, position p in its row p
//   ids           the token ids a program feeds (int32, up to context words; host-written)
//   logits        [256] of the last fed position (host-read)
//   token         the token chosen from them (int32, host-read)
//   work          each program's intermediate values, then its kernels' HBM scratch
// feed_program(p0, m) runs the m tokens at ids[0 .. m) at positions p0 .. p0 + m - 1 (m > 1: a
// prefill; m = 1: one decoding step): the per-op kernels of pass lower (compiler::lower_node) on
// a step graph whose external values are views of the layout: the new keys and values of each
// head are written straight into their cache rows by the copy of a select node, and each head's
// attention reads the T = p0 + m cached rows in place ([T, d_head] GEMM operands; the keys
// through the transpose unit). Only the last position's logits are computed; the sampling kernel
// (kernels_sample.h) then chooses the next token from them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/spec.h"
#include "graph/gpt_model.h"
#include "isa/image.h"
#include "numerics/sampling.h"

namespace tessera::compiler {

struct DecodeLayout {
  graph::GptSpec spec;
  std::vector<int64_t> params;  // word address of each parameter
  int64_t keys = 0, values = 0, ids = 0, logits = 0, token = 0, work = 0;
  int64_t cache_words = 0;  // of keys (values: as many)
};

// Throws Error (graph::build_gpt's) on a bad spec.
DecodeLayout decode_layout(const graph::GptSpec& spec);

struct FeedProgram {
  isa::Program program;
  int64_t hbm_words = 0;  // the footprint, scratch included
};

// Throws Error when p0 + m passes the context, m < 1, or the program does not fit the core
// (HBM, vector memory, instruction memory: the kernels' errors).
FeedProgram feed_program(const DecodeLayout& layout, int p0, int m, const numerics::Sampling& s,
                         const core::CoreSpec& spec);

}  // namespace tessera::compiler
