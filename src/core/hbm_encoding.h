// Exponent base-delta encoding of HBM traffic (docs/term-serial.md, "Memory encoding"):
// a memory-system mode in which DMA to and from HBM moves the ENCODED size of its words while the
// values stored and delivered stay exactly the words (the codec is lossless:
// numerics/exponent_codec.h).
//
// Config (core.hbm.exponent_encoding.*): on (default false), group_size (values per group),
// delta_bits (width of an exponent delta). Every HBM word is taken as an fp32 bit pattern
// (sign, 8-bit exponent, 23-bit mantissa); integer words (labels, descriptors) are encoded the same
// way, losslessly.
//
// Charge of one DMA request (HbmEncoder::charge): each chunk is encoded as its own stream (groups
// start at the chunk's first word) and occupies ceil(bits / 8) bytes; the request's HBM bytes are
// the sum over its chunks. The words are those of the source when the request issues (HBM for
// reads, vector or scalar memory for writes). Off: 4 bytes per word. The DMA engine streams these
// bytes (core/dma.h), and the HBM byte counters (energy) count them; vector and scalar memory
// traffic stays 4 bytes per word.
//
// Per-kind accounting: with a role map set (set_roles), every charged request is counted (requests,
// raw bytes, encoded bytes) under the kind of the tensor its first chunk's HBM word belongs to at
// the issuing bundle's pc (HbmRole: a pc range and a word range; the compiler builds the map:
// compiler/hbm_roles.h). Requests no role covers count as kOther. Nothing is counted while the
// encoding is off.
//
// The Adam unit's own HBM path (core/adam_unit.h) is encoded the same way (charge_chunks): each of
// its DMA micro-ops is one request whose chunks (a block of theta, of g, of m and of v; a program;
// the hyperparameters; the zeroed spill area) are each one stream; the unit names the kind itself
// (theta: weights, g: gradients, m and v: optimizer state, program and hyperparameters: other).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "common/config.h"
#include "numerics/exponent_codec.h"

namespace tessera::core {

struct DmaRequest;
class ArchState;

struct HbmEncodingSpec {
  bool on = false;
  numerics::ExponentCodecConfig codec{16, 3, 23};  // mantissa_bits: HBM words are fp32 patterns
};

// Reads core.hbm.exponent_encoding.{on, group_size, delta_bits}.
HbmEncodingSpec read_hbm_encoding_spec(ConfigReader& r);

enum class HbmKind : uint8_t { kWeights, kActivations, kGradients, kOptimizerState, kOther };
inline constexpr int kNumHbmKinds = static_cast<int>(HbmKind::kOther) + 1;  // kOther is last
// "weights", "activations", "gradients", "optimizer_state", "other".
const char* to_string(HbmKind kind);

// HBM words [hbm, hbm + words) hold a tensor of `kind` while bundles [first_pc, end_pc) run.
struct HbmRole {
  int64_t first_pc = 0, end_pc = 0;
  int64_t hbm = 0, words = 0;
  HbmKind kind = HbmKind::kOther;
};

// Integer counters of encoded HBM traffic of one kind; they add up.
struct HbmTraffic {
  int64_t requests = 0, raw_bytes = 0, encoded_bytes = 0;
  HbmTraffic& operator+=(const HbmTraffic& o);
  friend HbmTraffic operator-(HbmTraffic a, const HbmTraffic& b);
  friend bool operator==(const HbmTraffic&, const HbmTraffic&) = default;
};
using HbmTrafficByKind = std::array<HbmTraffic, kNumHbmKinds>;

class HbmEncoder {
 public:
  explicit HbmEncoder(const HbmEncodingSpec& spec) : m_spec(spec) {}

  bool on() const { return m_spec.on; }
  // The bytes the HBM data path carries for `r` (ranges already validated), issued at `pc`.
  int64_t charge(const DmaRequest& r, const ArchState& s, int64_t pc);
  // The bytes the HBM data path carries for one request of the Adam unit moving `chunks` (each one
  // stream) of tensor kind `kind`; 4 per word when off (then nothing is counted).
  int64_t charge_chunks(std::initializer_list<std::span<const uint32_t>> chunks, HbmKind kind);
  // The role map of the program now running (must outlive its use; nullptr: none); its pcs are
  // the running program's pcs + pc_offset (a program cut out of the one the map describes).
  void set_roles(const std::vector<HbmRole>* roles, int64_t pc_offset) {
    m_roles = roles;
    m_pc_offset = pc_offset;
  }
  // Cumulative since construction.
  const HbmTrafficByKind& traffic() const { return m_traffic; }

 private:
  HbmKind kind_of(int64_t pc, int64_t hbm) const;
  void count(HbmKind kind, int64_t raw, int64_t encoded);
  int64_t chunk_bytes(std::span<const uint32_t> words) const;
  HbmEncodingSpec m_spec;
  std::vector<uint32_t> m_chunk;  // an HBM chunk read for sizing
  const std::vector<HbmRole>* m_roles = nullptr;
  int64_t m_pc_offset = 0;
  HbmTrafficByKind m_traffic{};
};

}  // namespace tessera::core
