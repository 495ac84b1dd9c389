// FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3, one byte at a time.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

constexpr uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace tessera
