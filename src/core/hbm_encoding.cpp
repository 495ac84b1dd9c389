#include "core/hbm_encoding.h"

#include <span>

#include "core/dma.h"
#include "core/state.h"

namespace tessera::core {

HbmEncodingSpec read_hbm_encoding_spec(ConfigReader& r) {
  HbmEncodingSpec s;
  s.on = r.get_bool("core.hbm.exponent_encoding.on", false,
                    "DMA to/from HBM moves the exponent base-delta encoded size of its words "
                    "(core/hbm_encoding.h)");
  s.codec.group_size =
      static_cast<int>(r.get_int("core.hbm.exponent_encoding.group_size", 16, {1, 4096}, "values",
                                 "values per group (the first one's exponent is the base)"));
  s.codec.delta_bits =
      static_cast<int>(r.get_int("core.hbm.exponent_encoding.delta_bits", 3, {1, 8}, "bits",
                                 "width of an exponent delta (escape: + 8 bits)"));
  return s;
}

const char* to_string(HbmKind kind) {
  switch (kind) {
    case HbmKind::kWeights:
      return "weights";
    case HbmKind::kActivations:
      return "activations";
    case HbmKind::kGradients:
      return "gradients";
    case HbmKind::kOptimizerState:
      return "optimizer_state";
    case HbmKind::kOther:
      break;
  }
  return "other";
}

HbmTraffic& HbmTraffic::operator+=(const HbmTraffic& o) {
  requests += o.requests;
  raw_bytes += o.raw_bytes;
  encoded_bytes += o.encoded_bytes;
  return *this;
}

HbmTraffic operator-(HbmTraffic a, const HbmTraffic& b) {
  a.requests -= b.requests;
  a.raw_bytes -= b.raw_bytes;
  a.encoded_bytes -= b.encoded_bytes;
  return a;
}

HbmKind HbmEncoder::kind_of(int64_t pc, int64_t hbm) const {
  if (m_roles == nullptr) return HbmKind::kOther;
  pc += m_pc_offset;
  for (const HbmRole& r : *m_roles)
    if (pc >= r.first_pc && pc < r.end_pc && hbm >= r.hbm && hbm < r.hbm + r.words) return r.kind;
  return HbmKind::kOther;
}

int64_t HbmEncoder::charge(const DmaRequest& r, const ArchState& s, int64_t pc) {
  const int64_t raw = r.words() * 4;
  if (!m_spec.on || r.words() == 0) return raw;
  const bool from_hbm = r.dir == DmaDir::HbmToVmem || r.dir == DmaDir::HbmToSmem;
  const uint32_t* onchip =
      r.dir == DmaDir::HbmToSmem || r.dir == DmaDir::SmemToHbm ? s.smem.data() : s.vmem.data();
  int64_t bytes = 0;
  for (int64_t i = 0; i < r.count; ++i) {
    const int64_t src = r.src + i * r.src_stride;
    std::span<const uint32_t> words;
    if (from_hbm) {
      m_chunk.resize(static_cast<size_t>(r.chunk));
      s.hbm.read_block(src, m_chunk.data(), r.chunk);
      words = m_chunk;
    } else {
      words = std::span<const uint32_t>(onchip + src, static_cast<size_t>(r.chunk));
    }
    bytes += chunk_bytes(words);
  }
  count(kind_of(pc, from_hbm ? r.src : r.dst), raw, bytes);
  return bytes;
}

int64_t HbmEncoder::charge_chunks(std::initializer_list<std::span<const uint32_t>> chunks,
                                  HbmKind kind) {
  int64_t raw = 0, bytes = 0;
  for (std::span<const uint32_t> c : chunks) {
    raw += 4 * static_cast<int64_t>(c.size());
    if (m_spec.on && !c.empty()) bytes += chunk_bytes(c);
  }
  if (!m_spec.on || raw == 0) return raw;
  count(kind, raw, bytes);
  return bytes;
}

int64_t HbmEncoder::chunk_bytes(std::span<const uint32_t> words) const {
  return (numerics::exponent_encoded_bits(words, m_spec.codec) + 7) / 8;
}

void HbmEncoder::count(HbmKind kind, int64_t raw, int64_t encoded) {
  HbmTraffic& t = m_traffic[static_cast<size_t>(kind)];
  ++t.requests;
  t.raw_bytes += raw;
  t.encoded_bytes += encoded;
}

}  // namespace tessera::core
