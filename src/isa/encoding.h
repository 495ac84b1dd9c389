// Binary encoding of bundles (the per-slot word contract is in instruction.h).
//
// A bundle is kNumSlots 64-bit little-endian words in slot order: kBundleBytes = 88 bytes.
// decode_bundle validates every slot (see isa::decode) and throws tessera::Error naming the slot.
#pragma once

#include <cstdint>
#include <span>

#include "isa/instruction.h"

namespace tessera::isa {

// Writes the 88-byte encoding of `b` to `out` (out.size() >= kBundleBytes).
void encode_bundle(const Bundle& b, std::span<uint8_t> out);
// Decodes 88 bytes; throws tessera::Error("slot <name>", "invalid encoding: ...").
Bundle decode_bundle(std::span<const uint8_t> in);

// Little-endian helpers shared by the image reader and writer.
uint64_t load_le64(const uint8_t* p);
uint32_t load_le32(const uint8_t* p);
void store_le64(uint8_t* p, uint64_t v);
void store_le32(uint8_t* p, uint32_t v);

}  // namespace tessera::isa
