// libFuzzer target: arbitrary bytes as a training checkpoint (runtime/checkpoint.h).
//
// Each input is decoded three ways: as given; behind a valid magic and version; and, so that
// mutations get past the checksum to the header and payload checks, behind the magic and version
// with the correct CRC-32 appended.
// Properties: decode_checkpoint ends normally or with a tessera::Error (fuzz_support.h); a
// checkpoint it accepts survives encode -> decode with the same header and tensors.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "runtime/checkpoint.h"

namespace {

using namespace tessera;

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() ||
        (!a[i].empty() && std::memcmp(a[i].data(), b[i].data(), 4 * a[i].size()) != 0))
      return false;
  return true;
}

void decode(const std::string& bytes) {
  runtime::Checkpoint c;
  if (!fuzz::survives([&] { c = runtime::decode_checkpoint(bytes, "fuzz.tsck"); })) return;
  runtime::Checkpoint back;
  fuzz::check(fuzz::survives(
      [&] { back = runtime::decode_checkpoint(runtime::encode_checkpoint(c), "back.tsck"); }));
  fuzz::check(back.identity == c.identity && back.progress == c.progress);
  fuzz::check(same_bits(back.params, c.params) && same_bits(back.state, c.state));
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(fuzz::as_text(data, size));
  decode(raw);
  std::string framed("TSRCKPT\0", 8);
  put_u32(framed, runtime::kCheckpointVersion);
  framed += raw;
  decode(framed);
  put_u32(framed, static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                              reinterpret_cast<const Bytef*>(framed.data()),
                                              static_cast<uInt>(framed.size()))));
  decode(framed);
  return 0;
}
