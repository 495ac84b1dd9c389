#include "runtime/text_windows.h"

#include <string>

#include "common/error.h"

namespace tessera::runtime {

namespace {

void check_fits(int64_t stream_bytes, int context, int64_t needed) {
  if (context < 1 || stream_bytes < needed)
    throw Error("text windows", "a stream of " + std::to_string(stream_bytes) +
                                    " bytes does not hold the windows of context " +
                                    std::to_string(context) + " (" + std::to_string(needed) +
                                    " bytes needed)");
}

}  // namespace

std::vector<int64_t> draw_window_starts(int64_t stream_bytes, int context, int batch,
                                        SplitMix64& rng) {
  check_fits(stream_bytes, context, int64_t{context} + 1);
  std::vector<int64_t> starts(static_cast<size_t>(batch));
  const uint64_t choices = static_cast<uint64_t>(stream_bytes - context);
  for (int64_t& s : starts) s = static_cast<int64_t>(rng.below(choices));
  return starts;
}

std::vector<int64_t> consecutive_window_starts(int64_t stream_bytes, int context, int count) {
  check_fits(stream_bytes, context, int64_t{count} * context + 1);
  std::vector<int64_t> starts(static_cast<size_t>(count));
  for (int b = 0; b < count; ++b) starts[static_cast<size_t>(b)] = int64_t{b} * context;
  return starts;
}

void fill_windows(std::string_view stream, const std::vector<int64_t>& starts, int context,
                  int32_t* ids, int32_t* targets) {
  for (size_t b = 0; b < starts.size(); ++b)
    for (int t = 0; t < context; ++t) {
      const size_t at = static_cast<size_t>(starts[b] + t);
      const size_t out = b * static_cast<size_t>(context) + static_cast<size_t>(t);
      ids[out] = static_cast<unsigned char>(stream[at]);
      targets[out] = static_cast<unsigned char>(stream[at + 1]);
    }
}

}  // namespace tessera::runtime
