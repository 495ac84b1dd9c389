// TermMxuSpec: the term-serial processing-element option of the matrix unit (docs/term-serial.md,
// docs/term-serial.md), read from the "core.mxu.pe" and "core.mxu.term.*" config keys (declared in
// term_mxu_spec.cpp, listed by `tessera config --schema`).
//
// With core.mxu.pe = "term-serial" the MXU keeps its programming model (mlw/mflip/mmul*/mpop, the
// R x C weight tile, accumulator blocks, result FIFO) but an mmul's values are those of term-serial
// PEs (numerics/term_matmul.h: skipped terms included) and its time is that of `tiles` tiles of
// tile_rows x tile_cols PEs with `lanes` lanes each (core/mxu.h states the timing rule).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "core/term_layer_width.h"
#include "numerics/term_matmul.h"

namespace tessera::core {

enum class MxuPe { Bf16, TermSerial };

struct TermMxuSpec {
  numerics::TermTileConfig tile;  // rows x cols PEs, PeConfig (lanes, width W), serial operand
  int tiles = 1;                  // tiles working on one mmul's output blocks
  int push_cycles = 0;            // extra cycles an mmul occupies the unit (operand staging)
  int latency_cycles = 4;  // cycles from the end of the last step to the result (pipeline drain)
  double area_ratio =
      1.0;  // area of one term-serial PE / area of one bf16 MAC PE with as many lanes
  std::string area_source;  // where area_ratio comes from
  double term_pj = 0.0;     // energy per processed term (one lane, one cycle)
  double step_pj = 0.0;     // energy per PE step (exponent block, adder tree, accumulator)
  std::vector<LayerAccWidth> layer_acc_width;  // per-layer widths (core/term_layer_width.h)
};

// Reads core.mxu.pe and core.mxu.term.*; `sublanes`, `mxu_cols` size the derived tile count:
// tiles = 0 means ceil(sublanes / tile_rows) * ceil(C / tile_cols): one PE per output of a push.
MxuPe read_mxu_pe(ConfigReader& reader);
TermMxuSpec read_term_mxu_spec(ConfigReader& reader, int sublanes, int mxu_cols);

const char* to_string(MxuPe pe);

}  // namespace tessera::core
