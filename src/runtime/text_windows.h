// Next-byte prediction windows over a byte stream (the fortunes corpus): the inputs and targets
// of one language-model step.
//
// Contract: window b of a batch starts at byte starts[b] of the stream; for t in [0, context):
// ids[b * context + t] = stream[starts[b] + t] and targets[b * context + t] =
// stream[starts[b] + t + 1] (bytes as unsigned values 0..255). Training draws the starts
// uniformly from [0, stream size - context - 1] (SplitMix64::below, one draw per window, in
// batch order); evaluation takes consecutive non-overlapping windows (start b * context).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/splitmix64.h"

namespace tessera::runtime {

// `batch` uniform window starts; throws Error if the stream is shorter than context + 1 bytes.
std::vector<int64_t> draw_window_starts(int64_t stream_bytes, int context, int batch,
                                        SplitMix64& rng);

// The starts of the first `count` non-overlapping windows (b * context); throws Error if the
// stream does not hold them.
std::vector<int64_t> consecutive_window_starts(int64_t stream_bytes, int context, int count);

// Fills ids and targets (starts.size() * context values each).
void fill_windows(std::string_view stream, const std::vector<int64_t>& starts, int context,
                  int32_t* ids, int32_t* targets);

}  // namespace tessera::runtime
