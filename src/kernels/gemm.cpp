#include "kernels/gemm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "common/error.h"
#include "common/int_math.h"
#include "kernels/bundle_builder.h"
#include "kernels/loop_roll.h"

namespace tessera::kernels {

namespace {

using isa::Opcode;
using isa::SlotClass;

constexpr int kFlagWeights = 0, kFlagPanel = 1, kFlagOut = 2;
constexpr int kRegZero = 0, kRegBlock = 1;
constexpr int kDmaRegs[3] = {8, 11, 14};  // sD, sA, sB triple per DMA kind (weights, panel, out)
// With A in vector memory (no panel DMAs): the row stride of its strided loads.
constexpr int kRegPanelStride = kDmaRegs[1];
// The regular schedule: the weight loads' slot base, and the sD, sA, sB triple of the weight
// DMAs of ragged tiles (the full tiles' DMAs keep their slot in kDmaRegs[0], toggled).
constexpr int kRegSlot = 2, kRaggedDmaRegs = 3;
// The regular schedule: the output region of the group's MXU 0 in rows (the stores' base) and in
// words (the output DMAs' source), both toggled between groups.
constexpr int kRegOutRow = 6, kRegOutWord = 7;
constexpr int kRegularRing = 4;  // full-tile weight slots per MXU (a power of two)
// Vreg rotations: input registers (shared by the MXUs), weight registers per MXU, then 2 for
// popped results. A rotation is 3 registers continued across tiles, or, in the regular schedule,
// 5 restarted per tile (rotation_index), the popped results' too.
constexpr int kVIn = 0;
constexpr int kRotation = 3, kRegularRotation = 5;
constexpr int kWeightSlots = 6;  // per MXU
// A streamed panel (GemmPlan::panel_ring): at most this many K-tile regions in its ring (two more
// for ragged K tiles), its region DMAs issued this many K steps ahead of their use at most.
constexpr int kPanelRing = 16, kMinPanelRing = 4, kPanelLead = 8;
constexpr double kStreamGain = 2.0;

// The register of use q (of n >= 3) in a rotation restarted per tile: q mod 3, then registers 3
// and 4 for the n mod 3 last uses, so that any three consecutive uses, across a tile boundary
// too, are three different registers (a register is loaded two uses ahead of its read).
int rotation_index(int64_t q, int64_t n) {
  const int64_t full = n - n % 3;
  return static_cast<int>(q < full ? q % 3 : 3 + (q - full));
}

// One weight tile on one MXU. The MXUs work on the N tiles of a group (unit u takes N tile
// group * units + u) in lockstep: the same steps, the same input rows.
struct Tile {
  int mc, nt, kt;
  int unit;         // the MXU
  int units;        // MXUs the tile's group uses (fewer than the core has in a ragged last group)
  int pushes;       // P: rows of this chunk / S
  int64_t first;    // first step of the tile's range
  int weight_slot;  // vector-memory slot of its weights
  int64_t input;    // the group's first push number (input vreg rotation)
  int64_t kstep;    // the group's K step: its number among all groups' K steps
};

// Vector-memory rows of a layout with `panels` A panel buffers of Mb rows per K tile, the weight
// slots and the output regions.
int64_t layout_rows(const core::CoreSpec& spec, int K, int64_t Mb, int panels) {
  const int R = spec.mxu_rows;
  const int64_t KT = ceil_div(K, R);
  const int weight_slots = (K % R ? 2 * kWeightSlots : kWeightSlots) * spec.mxu_count;
  return panels * KT * Mb + static_cast<int64_t>(weight_slots) * R + 2ll * spec.mxu_count * Mb;
}

isa::Instr on_mxu(int unit, isa::Instr in) {
  in.c = static_cast<uint8_t>(unit);
  return in;
}

class GemmGenerator {
 public:
  GemmGenerator(const core::CoreSpec& spec, GemmPlan& plan, int64_t smem_base, bool loops,
                bool nested, bool a_in_vmem)
      : m_spec(spec),
        m_plan(plan),
        m_smem_base(smem_base),
        m_a_in_vmem(a_in_vmem),
        m_loops(loops),
        m_nested(nested),
        m_units(spec.mxu_count),
        m_mlws(static_cast<size_t>(spec.mxu_count), 0) {}
  isa::Program generate();

 private:
  enum DmaKind { kWeights = 0, kPanel = 1, kOut = 2 };

  // A step is two bundles per MXU: A (input load of MXU 0, mflip, mmul, mpop) and B (weight load,
  // mlw), MXU by MXU.
  int64_t A(int64_t step, int unit = 0) const { return 2 * (step * m_units + unit); }
  int64_t B(int64_t step, int unit = 0) const { return A(step, unit) + 1; }
  int v_weight(int unit) const { return kVIn + m_rotation * (1 + unit); }
  int v_pop() const { return v_weight(m_units); }
  int64_t push_step(const Tile& t, int p) const {
    return t.first + (m_plan.double_buffer ? 0 : m_rs) + p;
  }
  int64_t mlw_step(const Tile& t, int j) const {
    return m_plan.double_buffer ? t.first - m_rs + j : t.first + j;
  }
  bool ragged(const Tile& t) const { return m_plan.K % m_plan.R != 0 && t.kt == m_plan.KT - 1; }
  int64_t slot_row(const Tile& t) const {
    return m_weight_base + static_cast<int64_t>(t.weight_slot) * m_plan.R;
  }
  // The output region (of 2 per MXU) that the next output, the result of last-K tile t, is stored
  // to: the outputs' number modulo the regions, counting a ragged last group as full in the
  // regular schedule (so that the group's MXU u stores to region u of the group's half).
  int64_t next_out_region(const Tile& t) const {
    const int64_t groups = ceil_div(m_plan.NT, m_units);
    const int64_t o = m_regular ? (t.mc * groups + t.nt / m_units) * m_units + t.unit
                                : static_cast<int64_t>(m_outputs.size());
    return o % (2 * m_units);
  }
  int rows_valid(int mc) const { return std::min(m_plan.Mb, m_plan.M - mc * m_plan.Mb); }
  int k_valid(int kt) const { return std::min(m_plan.R, m_plan.K - kt * m_plan.R); }
  int n_valid(int nt) const { return std::min(m_plan.C, m_plan.N - nt * m_plan.C); }

  void layout();
  void plan_tiles();
  uint32_t descriptor(int64_t count, int64_t chunk, int64_t src_stride, int64_t dst_stride);
  int64_t place_dma(DmaKind kind, int64_t desired, Opcode op, int64_t dst, int64_t src,
                    uint32_t desc);
  // The same with the ops that set its sD, sA, sB triple (registers regs, regs + 1, regs + 2).
  int64_t place_dma(DmaKind kind, int64_t desired, Opcode op, int regs,
                    const std::array<isa::Instr, 3>& setup);
  void place_wait(int flag, int count, int64_t latest, int64_t after_dma);
  void emit_mlws(size_t i);
  void emit_pushes(size_t i);
  void place_slot_toggles();
  void place_weight_dma(size_t i);
  void place_out_dma(size_t o);
  int64_t place_toggle(int reg, int64_t after, int64_t before, int64_t flip);
  void place_out_row_toggles();
  int streamed_chunk_rows(int Mp, int& ring) const;
  double estimated_cycles(int Mb, bool streamed) const;
  void emit_panel_dmas();
  void emit_streamed_panel_dmas();
  void place_waits();

  const core::CoreSpec& m_spec;
  GemmPlan& m_plan;
  int64_t m_smem_base = 0;
  bool m_a_in_vmem = false;  // GemmPlacement::a_in_vmem: no panel DMAs, one chunk
  bool m_loops = true, m_nested = false;
  // The regular schedule (nested rolling), in which every group of N tiles has the same code
  // but for affine immediates: rotations restarted per tile; the full tiles' weights cycle
  // through a ring of slots per MXU in Gray-code order, addressed through registers moved to the
  // next slot by `sxori` (kRegSlot for the loads, the DMA's sD), so the slot never shows in an
  // immediate and the code repeats every two K steps.
  bool m_regular = false;
  int m_rotation = kRotation;   // registers per rotation
  int m_units = 1;              // MXUs
  std::vector<int64_t> m_mlws;  // per MXU: mlw ops emitted (weight vreg rotation)
  BundleBuilder m_bb;
  int m_rs = 0;      // R / S: mlw ops per tile
  int m_lag = 0;     // D: pushes between a result's push and its pop
  int m_panels = 1;  // A panel buffers
  // A streamed panel (GemmPlan::panel_ring > 0): per K step, its region in the ring and the bundle
  // of that region's DMA, and the first tile of the K step (its group's unit 0).
  std::vector<int> m_kstep_region;
  std::vector<int64_t> m_kstep_dma;
  std::vector<size_t> m_kstep_tile;
  int64_t m_panel_base[2] = {0, 0}, m_weight_base = 0, m_out_base = 0;
  std::vector<Tile> m_tiles;
  std::vector<uint32_t> m_smem;
  std::map<std::array<uint32_t, 4>, uint32_t> m_descriptors;
  std::array<int64_t, 3> m_last_dma{-1, -1, -1};
  std::vector<int64_t> m_weight_dma;      // bundle of each tile's weight DMA
  int64_t m_last_full_dst = -1;           // regular schedule: sD and sA of the last full
  int64_t m_last_full_src = -1;           // tile's weight DMA
  std::vector<int64_t> m_panel_last_dma;  // per chunk: bundle of its last region DMA
  std::vector<int64_t> m_out_dma;         // per output tile: bundle of its DMA
  std::vector<size_t> m_outputs;          // per output tile: its (last K) tile
  std::vector<int64_t> m_out_region;      // per output tile
  std::vector<int64_t> m_out_first_store, m_out_last_store;  // per output tile: bundles
  std::set<int64_t> m_first_push_steps;  // steps whose A bundle holds mflip + mmul
  int64_t m_global_pop = 0;
};

void GemmGenerator::layout() {
  GemmPlan& p = m_plan;
  const int64_t rows = m_spec.vmem_rows();
  const int Mp = static_cast<int>(ceil_div(p.M, p.S) * p.S);
  int Mb = Mp;
  if (p.KT > 1) Mb = std::min(Mb, m_spec.mxu_acc_blocks * p.S);
  const int weight_slots = (p.K % p.R ? 2 * kWeightSlots : kWeightSlots) * m_units;
  auto needed = [&](int mb) { return layout_rows(m_spec, p.K, mb, ceil_div(p.M, mb) > 1 ? 2 : 1); };
  while (Mb > p.S && needed(Mb) > rows) Mb -= p.S;
  // The panel streams when a whole one does not fit, or when a whole one takes chunks so thin
  // that streaming is estimated at least kStreamGain times faster (weight gradients: K = batch x
  // height x width; the estimate is rough, so a layout changes only for a clear gain).
  int ring = 0;
  const int streamed = m_a_in_vmem ? 0 : streamed_chunk_rows(Mp, ring);
  const bool whole = needed(Mb) <= rows;
  if (streamed > 0 &&
      (!whole || kStreamGain * estimated_cycles(streamed, true) < estimated_cycles(Mb, false))) {
    Mb = streamed;
    p.panel_ring = ring;
  } else if (!whole) {
    throw Error("gemm", "vector memory (" + std::to_string(rows) + " rows) cannot hold a " +
                            std::to_string(p.S) + "-row A panel of K = " + std::to_string(p.K) +
                            " plus weight and output buffers");
  }
  p.Mb = Mb;
  p.MC = static_cast<int>(ceil_div(p.M, Mb));
  if (m_a_in_vmem && p.MC > 1)
    throw Error("gemm", "an A panel of " + std::to_string(p.M) +
                            " rows in vector memory exceeds one chunk of " + std::to_string(Mb));
  // A streamed panel is one ring of regions (the ragged K tiles' two after the full tiles').
  m_panels = p.panel_ring > 0 ? 1 : p.MC > 1 ? 2 : 1;
  m_panel_base[1] = p.panel_ring > 0 ? (p.panel_ring + (p.K % p.R ? 2 : 0)) * int64_t{Mb}
                                     : static_cast<int64_t>(p.KT) * Mb;
  m_weight_base = m_panels * m_panel_base[1];
  m_out_base = m_weight_base + static_cast<int64_t>(weight_slots) * p.R;
  // The regular schedule needs rotations of at least 3 uses per tile and their registers, and
  // a ring whose slot rows are bit fields (units * R a power of two, the base aligned to the
  // ring), so that moving to the next slot is an exclusive or.
  const int64_t ring_rows = static_cast<int64_t>(kRegularRing) * m_units * p.R;
  const int64_t weight_base = ceil_div(m_weight_base, ring_rows) * ring_rows;
  const int64_t out_base = std::max(
      m_out_base, weight_base + (kRegularRing + (p.K % p.R ? 2 : 0)) * int64_t{m_units} * p.R);
  m_regular = m_nested && m_rs >= 3 && ceil_div(rows_valid(p.MC - 1), p.S) >= 3 &&
              kVIn + kRegularRotation * (2 + m_units) <= m_spec.vector_regs &&
              std::has_single_bit(static_cast<uint64_t>(m_units * p.R)) &&
              out_base + 2ll * m_units * Mb <= rows;
  if (m_regular) {
    m_rotation = kRegularRotation;
    m_weight_base = weight_base;
    m_out_base = out_base;
  }
}

// The rows per M chunk of a streamed panel: the most the accumulators take, fewer if the ring
// would have under kMinPanelRing regions (0 if none fits); `ring` gets its regions. The ring leaves
// room for the weight slots of either schedule (the regular one's ring, its alignment and ragged
// slots) and the output regions.
int GemmGenerator::streamed_chunk_rows(int Mp, int& ring) const {
  const GemmPlan& p = m_plan;
  const int64_t rows = m_spec.vmem_rows();
  const int ragged_regions = p.K % p.R ? 2 : 0;
  for (int mb = p.KT > 1 ? std::min(Mp, m_spec.mxu_acc_blocks * p.S) : Mp; mb >= p.S; mb -= p.S) {
    const int64_t reserve = int64_t{kRegularRing + 2 * kWeightSlots} * m_units * p.R +
                            2ll * m_units * mb + int64_t{ragged_regions} * mb;
    const int64_t regions = (rows - reserve) / mb;
    if (regions >= kMinPanelRing) {
      ring = static_cast<int>(std::min<int64_t>(regions, kPanelRing));
      return mb;
    }
  }
  return 0;
}

// A layout's cycles, roughly: the array's steps (a tile takes max(pushes, R / S) of S cycles) or
// the HBM traffic (A once, or once per group of N tiles when streamed; B once per chunk; C),
// whichever is longer.
double GemmGenerator::estimated_cycles(int Mb, bool streamed) const {
  const GemmPlan& p = m_plan;
  const int64_t groups = ceil_div(p.NT, m_units), chunks = ceil_div(p.M, Mb);
  int64_t steps = 0;
  for (int64_t c = 0; c < chunks; ++c)
    steps += std::max<int64_t>(ceil_div(std::min<int64_t>(Mb, p.M - c * Mb), p.S), p.R / p.S);
  const double mxu = static_cast<double>(steps * p.KT * groups * p.S);
  const double a = static_cast<double>(p.M) * p.K, b = static_cast<double>(p.K) * p.N;
  const double words = a * static_cast<double>(streamed ? groups : 1) +
                       b * static_cast<double>(chunks) + static_cast<double>(p.M) * p.N;
  return std::max(mxu, 4.0 * words / m_spec.hbm_bytes_per_cycle);
}

void GemmGenerator::plan_tiles() {
  const GemmPlan& p = m_plan;
  int full = 0, ragged = 0;                  // tiles
  int64_t full_steps = 0, ragged_steps = 0;  // groups' K steps (regular schedule)
  const int64_t panel_dmas = m_a_in_vmem ? 0 : p.panel_ring > 0 ? kPanelLead : p.KT;
  int64_t dmas = std::min<int64_t>(kWeightSlots, p.tiles) + panel_dmas;  // prologue
  int64_t step = m_rs + 8 + dmas * 3;
  const int ring = kWeightSlots * m_units;
  int64_t input = 0;
  for (int mc = 0; mc < p.MC; ++mc)
    for (int n0 = 0; n0 < p.NT; n0 += m_units)
      for (int kt = 0; kt < p.KT; ++kt) {
        const bool is_ragged = p.K % p.R != 0 && kt == p.KT - 1;
        const int P = static_cast<int>(ceil_div(rows_valid(mc), p.S));
        const int units = std::min(m_units, p.NT - n0);
        // Regular schedule: the full tiles' ring in Gray-code order (consecutive slots differ in
        // one bit), the ragged tiles' two slots after it.
        const int64_t ring_step = (is_ragged ? ragged_steps++ : full_steps++) % kRegularRing;
        const int64_t place =
            is_ragged ? kRegularRing + ring_step % 2 : ring_step ^ (ring_step >> 1);
        const auto kstep = static_cast<int64_t>(m_kstep_tile.size());
        m_kstep_tile.push_back(m_tiles.size());
        for (int u = 0; u < units; ++u) {
          const int slot = m_regular   ? static_cast<int>(place) * m_units + u
                           : is_ragged ? ring + ragged++ % ring
                                       : full++ % ring;
          m_tiles.push_back(Tile{mc, n0 + u, kt, u, units, P, step, slot, input, kstep});
        }
        if (p.panel_ring > 0)  // the ring in K-step order, ragged K tiles in their own two
          m_kstep_region.push_back(is_ragged ? p.panel_ring + static_cast<int>(ragged_steps % 2)
                                             : static_cast<int>(full_steps % p.panel_ring));
        m_first_push_steps.insert(push_step(m_tiles.back(), 0));
        input += P;
        step += p.double_buffer ? std::max(P, m_rs) : m_rs + P;
      }
}

uint32_t GemmGenerator::descriptor(int64_t count, int64_t chunk, int64_t src_stride,
                                   int64_t dst_stride) {
  const std::array<uint32_t, 4> d{static_cast<uint32_t>(count), static_cast<uint32_t>(chunk),
                                  static_cast<uint32_t>(src_stride),
                                  static_cast<uint32_t>(dst_stride)};
  auto it = m_descriptors.find(d);
  if (it != m_descriptors.end()) return it->second;
  const auto at = static_cast<uint32_t>(m_smem_base + static_cast<int64_t>(m_smem.size()));
  if (at + 4 > static_cast<uint64_t>(m_spec.smem_words))
    throw Error("gemm", "scalar memory cannot hold the DMA descriptors");
  m_smem.insert(m_smem.end(), d.begin(), d.end());
  m_descriptors.emplace(d, at);
  return at;
}

std::array<isa::Instr, 3> set_triple(int regs, int64_t dst, int64_t src, uint32_t desc) {
  return {op_d_imm(Opcode::SLI, regs, static_cast<int32_t>(dst)),
          op_d_imm(Opcode::SLI, regs + 1, static_cast<int32_t>(src)),
          op_d_imm(Opcode::SLI, regs + 2, static_cast<int32_t>(desc))};
}

// Places a 2-D DMA at the first bundle >= desired with a free misc slot and three free scalar
// slots (for the sli of its operands) after the previous DMA of the same kind.
int64_t GemmGenerator::place_dma(DmaKind kind, int64_t desired, Opcode op, int64_t dst, int64_t src,
                                 uint32_t desc) {
  return place_dma(kind, desired, op, kDmaRegs[kind], set_triple(kDmaRegs[kind], dst, src, desc));
}

int64_t GemmGenerator::place_dma(DmaKind kind, int64_t desired, Opcode op, int base,
                                 const std::array<isa::Instr, 3>& setup) {
  const int64_t floor = m_last_dma[kind] + 1;
  for (int64_t x = std::max(desired, floor + 1);; ++x) {
    if (!m_bb.has_free(x, SlotClass::Misc)) continue;
    std::vector<int64_t> at;
    for (int64_t y = x - 1; y >= floor && at.size() < 3; --y)
      for (int k = m_bb.free_count(y, SlotClass::Scalar); k > 0 && at.size() < 3; --k)
        at.push_back(y);
    if (at.size() < 3) continue;
    for (int r = 0; r < 3; ++r) m_bb.put(at[r], setup[static_cast<size_t>(r)]);
    m_bb.put(x, op_dma(op, base, base + 1, base + 2,
                       kind == kWeights ? kFlagWeights
                       : kind == kPanel ? kFlagPanel
                                        : kFlagOut));
    m_last_dma[kind] = x;
    return x;
  }
}

void GemmGenerator::place_wait(int flag, int count, int64_t latest, int64_t after_dma) {
  const int64_t x = m_bb.find_backward(latest, after_dma + 1, SlotClass::Misc);
  TESSERA_CHECK(x >= 0, "gemm: no misc slot for a wait between its DMA and its first use");
  m_bb.put(x, op_wait(flag, count));
}

void GemmGenerator::emit_mlws(size_t i) {
  const Tile& t = m_tiles[i];
  const GemmPlan& p = m_plan;
  // Regular schedule, full tiles: the row relative to kRegSlot (the row of the pair's MXU 0).
  const bool toggled = m_regular && !ragged(t);
  const int base = toggled ? kRegSlot : kRegZero;
  const int64_t row = toggled ? static_cast<int64_t>(t.unit) * p.R : slot_row(t);
  int64_t& mlws = m_mlws[static_cast<size_t>(t.unit)];
  for (int j = 0; j < m_rs; ++j, ++mlws) {
    const int v =
        v_weight(t.unit) + (m_regular ? rotation_index(j, m_rs) : static_cast<int>(mlws % 3));
    const int64_t load = B(mlw_step(t, j) - 2, t.unit);
    m_bb.put(load, op_d_a_imm(Opcode::VLD, v, base, static_cast<int32_t>(row + j * p.S)));
    m_bb.put(B(mlw_step(t, j), t.unit), on_mxu(t.unit, op_a(Opcode::MLW, v)));
  }
}

// The weight DMA of tile i: as early as its slot is free (after the last read of the slot's
// previous tile), so it runs up to a ring of tiles ahead.
void GemmGenerator::place_weight_dma(size_t i) {
  const Tile& t = m_tiles[i];
  const GemmPlan& p = m_plan;
  int64_t desired = 0;
  for (size_t k = i; k-- > 0;)
    if (m_tiles[k].weight_slot == t.weight_slot) {
      desired = std::max(desired, B(mlw_step(m_tiles[k], m_rs - 1) - 2, m_tiles[k].unit) + 1);
      break;
    }
  const uint32_t desc = descriptor(k_valid(t.kt), n_valid(t.nt), p.N, m_spec.lanes);
  const int64_t src =
      p.b_hbm + static_cast<int64_t>(t.kt) * p.R * p.N + static_cast<int64_t>(t.nt) * p.C;
  const int64_t dst = slot_row(t) * m_spec.lanes;
  if (!m_regular) {
    m_weight_dma.push_back(place_dma(kWeights, desired, Opcode::DMAHV2, dst, src, desc));
  } else if (ragged(t)) {
    m_weight_dma.push_back(place_dma(kWeights, desired, Opcode::DMAHV2, kRaggedDmaRegs,
                                     set_triple(kRaggedDmaRegs, dst, src, desc)));
  } else {
    // Full tiles: sD moved to the slot by exclusive or, sA advanced by the step between the
    // previous full tile's source and this one (the same for every tile of a group but the first).
    const int r = kDmaRegs[kWeights];
    std::array<isa::Instr, 3> setup = set_triple(r, dst, src, desc);
    if (m_last_full_dst >= 0) {
      setup[0] = op_d_a_imm(Opcode::SXORI, r, r, static_cast<int32_t>(dst ^ m_last_full_dst));
      setup[1] =
          op_d_a_imm(Opcode::SADDI, r + 1, r + 1, static_cast<int32_t>(src - m_last_full_src));
    }
    m_weight_dma.push_back(place_dma(kWeights, desired, Opcode::DMAHV2, r, setup));
    m_last_full_dst = dst;
    m_last_full_src = src;
  }
}

void GemmGenerator::emit_pushes(size_t i) {
  const Tile& t = m_tiles[i];
  const GemmPlan& p = m_plan;
  const bool last_k = t.kt == p.KT - 1;
  const Opcode mul = p.KT == 1   ? Opcode::MMUL
                     : t.kt == 0 ? Opcode::MMULST
                     : last_k    ? Opcode::MMULOUT
                                 : Opcode::MMULACC;
  const int64_t region =
      p.panel_ring > 0
          ? m_panel_base[0] + int64_t{m_kstep_region[static_cast<size_t>(t.kstep)]} * p.Mb
          : m_panel_base[t.mc % m_panels] + static_cast<int64_t>(t.kt) * p.Mb;
  // A in vector memory row by row (GemmPlacement::a_in_vmem): push q's rows are q * S + i, K
  // tile kt of row r at row r * KT + kt, read with the stride KT in kRegPanelStride.
  auto input_load = [&](int v, int q) {
    if (!m_a_in_vmem)
      return op_d_a_imm(Opcode::VLD, v, kRegZero, static_cast<int32_t>(region + q * p.S));
    isa::Instr in = op_d_a_imm(Opcode::VLDS, v, kRegZero,
                               static_cast<int32_t>(static_cast<int64_t>(q) * p.S * p.KT + t.kt));
    in.b = kRegPanelStride;
    return in;
  };
  // The group's MXUs read the same input vreg and accumulator block number (kRegBlock); MXU 0
  // loads the input, the last MXU of the group advances the block.
  const bool lead = t.unit == 0, last_unit = t.unit == t.units - 1;
  if (p.KT > 1 && lead)
    m_bb.put(B(push_step(t, 0) - 1, m_units - 1), op_d_imm(Opcode::SLI, kRegBlock, 0));
  for (int q = 0; q < t.pushes; ++q) {
    const int v = kVIn + (m_regular ? rotation_index(q, t.pushes)
                                    : static_cast<int>((t.input + q) % kRotation));
    const int64_t s = push_step(t, q);
    if (lead) m_bb.put(A(s - 2), input_load(v, q));
    if (q == 0) m_bb.put(A(s, t.unit), on_mxu(t.unit, op_none(Opcode::MFLIP)));
    m_bb.put(A(s, t.unit), on_mxu(t.unit, p.KT == 1 ? op_a(mul, v) : op_a_b(mul, v, kRegBlock)));
    if (p.KT > 1 && last_unit)
      m_bb.put(A(s, t.unit), op_d_a_imm(Opcode::SADDI, kRegBlock, kRegBlock, 1));
  }
  if (!last_k) return;
  // Block q is popped L pushes later, in the A bundle before that push's mmul (so the FIFO has room
  // for it), or in the B bundle before when that A bundle starts a tile (mflip + mmul fill it).
  m_out_region.push_back(next_out_region(t));
  const int64_t out_row = m_out_base + m_out_region.back() * p.Mb;
  for (int q = 0; q < t.pushes; ++q, ++m_global_pop) {
    const int v =
        v_pop() + (m_regular ? rotation_index(q, t.pushes) : static_cast<int>(m_global_pop % 2));
    const int64_t s = push_step(t, q) + m_lag;
    const bool tile_start = m_first_push_steps.count(s) > 0;
    const int64_t pop = tile_start ? A(s, t.unit) - 1 : A(s, t.unit);
    m_bb.put_first(pop, on_mxu(t.unit, op_d(Opcode::MPOP, v)));
    // Regular schedule: relative to kRegOutRow (the region of the group's MXU 0).
    const int64_t row = m_regular ? t.unit * p.Mb + q * p.S : out_row + q * p.S;
    m_bb.put(pop + 1, op_store(Opcode::VST, v, m_regular ? kRegOutRow : kRegZero,
                               static_cast<int32_t>(row)));
    if (q == 0) m_out_first_store.push_back(pop + 1);
    if (q == t.pushes - 1) m_out_last_store.push_back(pop + 1);
  }
  m_plan.vmem_rows = std::max(m_plan.vmem_rows, out_row + t.pushes * p.S);
  m_outputs.push_back(i);
}

// Regular schedule: kRegSlot holds the row of MXU 0's slot of the full tiles whose weights are
// being loaded; it is set before the first load and toggled between the loads of consecutive
// groups of full tiles.
void GemmGenerator::place_slot_toggles() {
  int64_t last_load = -1, row = -1;
  for (size_t i = 0; i < m_tiles.size(); i += static_cast<size_t>(m_tiles[i].units)) {
    const Tile& t = m_tiles[i];
    if (ragged(t)) continue;
    const int64_t first_load = B(mlw_step(t, 0) - 2, 0);
    if (row < 0) {
      m_bb.put(0, op_d_imm(Opcode::SLI, kRegSlot, static_cast<int32_t>(slot_row(t))));
    } else if (row != slot_row(t)) {
      const int64_t x = m_bb.find_forward(last_load + 1, SlotClass::Scalar);
      TESSERA_CHECK(x < first_load, "gemm: no scalar slot to toggle the weight slot");
      m_bb.put(x, op_d_a_imm(Opcode::SXORI, kRegSlot, kRegSlot,
                             static_cast<int32_t>(row ^ slot_row(t))));
    }
    row = slot_row(t);
    const Tile& last = m_tiles[i + static_cast<size_t>(t.units) - 1];
    last_load = B(mlw_step(last, m_rs - 1) - 2, last.unit);
  }
}

// Output tile o (of tile i): DMA'd back once its last block is stored.
void GemmGenerator::place_out_dma(size_t o) {
  const Tile& t = m_tiles[m_outputs[o]];
  const GemmPlan& p = m_plan;
  const int64_t out_row = m_out_base + m_out_region[o] * p.Mb;
  const uint32_t desc = descriptor(rows_valid(t.mc), n_valid(t.nt), m_spec.lanes, p.N);
  const int64_t dst =
      p.c_hbm + static_cast<int64_t>(t.mc) * p.Mb * p.N + static_cast<int64_t>(t.nt) * p.C;
  const int64_t desired = A(push_step(t, t.pushes - 1) + m_lag + 2, t.unit);
  if (!m_regular) {
    m_out_dma.push_back(
        place_dma(kOut, desired, Opcode::DMAVH2, dst, out_row * m_spec.lanes, desc));
    return;
  }
  // Regular schedule: the source relative to kRegOutWord, which moves to the other region after
  // the group's last output DMA (and before the next group's first reads it).
  const int r = kDmaRegs[kOut];
  std::array<isa::Instr, 3> setup = set_triple(r, dst, 0, desc);
  setup[1] = op_d_a_imm(Opcode::SADDI, r + 1, kRegOutWord,
                        static_cast<int32_t>(int64_t{t.unit} * p.Mb * m_spec.lanes));
  m_out_dma.push_back(place_dma(kOut, desired, Opcode::DMAVH2, r, setup));
  if (t.unit != t.units - 1 || o + 1 == m_outputs.size()) return;
  const int64_t flip = static_cast<int64_t>(m_units) * p.Mb * m_spec.lanes;
  const int64_t region = m_out_base * m_spec.lanes;
  m_last_dma[kOut] = place_toggle(kRegOutWord, m_out_dma.back(), -1, region ^ (region + flip));
}

// `sxori reg, reg, flip` in the first bundle after `after` with a free scalar slot, which must
// come before `before` (unless negative); returns the bundle.
int64_t GemmGenerator::place_toggle(int reg, int64_t after, int64_t before, int64_t flip) {
  const int64_t x = m_bb.find_forward(after + 1, SlotClass::Scalar);
  TESSERA_CHECK(before < 0 || x < before, "gemm: no scalar slot to toggle an output region");
  m_bb.put(x, op_d_a_imm(Opcode::SXORI, reg, reg, static_cast<int32_t>(flip)));
  return x;
}

// Regular schedule: kRegOutRow and kRegOutWord start at the first group's region and
// kRegOutRow moves to the other region between a group's last store and the next group's first.
void GemmGenerator::place_out_row_toggles() {
  const GemmPlan& p = m_plan;
  const int64_t first = m_bb.find_forward(0, SlotClass::Scalar);
  m_bb.put(first, op_d_imm(Opcode::SLI, kRegOutRow, static_cast<int32_t>(m_out_base)));
  m_bb.put(m_bb.find_forward(0, SlotClass::Scalar),
           op_d_imm(Opcode::SLI, kRegOutWord, static_cast<int32_t>(m_out_base * m_spec.lanes)));
  const int64_t flip = static_cast<int64_t>(m_units) * p.Mb;
  for (size_t o = 0; o + 1 < m_outputs.size(); ++o) {
    const Tile& t = m_tiles[m_outputs[o]];
    if (t.unit == t.units - 1)
      place_toggle(kRegOutRow, m_out_last_store[o], m_out_first_store[o + 1],
                   m_out_base ^ (m_out_base + flip));
  }
}

// A panel of chunk mc: one 2-D DMA per K region. Chunk 0 in the prologue (waited for before the
// first weight load, so the MXU span starts with data in place); chunk mc + 1 spread over chunk
// mc's tiles.
void GemmGenerator::emit_panel_dmas() {
  const GemmPlan& p = m_plan;
  if (m_a_in_vmem) return;
  if (p.panel_ring > 0) return emit_streamed_panel_dmas();
  for (int mc = 0; mc < p.MC; ++mc) {
    const int64_t base = m_panel_base[mc % m_panels];
    for (int kt = 0; kt < p.KT; ++kt) {
      int64_t desired = 0;
      if (mc > 0) {
        const size_t first = static_cast<size_t>(mc - 1) * p.NT * p.KT;
        desired = A(m_tiles[first + static_cast<size_t>(kt) * p.NT].first);
        if (mc >= 2) {  // after the last input load of chunk mc - 2 (same buffer)
          const Tile& last = m_tiles[first - 1];
          desired = std::max(desired, A(push_step(last, last.pushes - 1)));
        }
      }
      const uint32_t desc = descriptor(rows_valid(mc), k_valid(kt), p.K, m_spec.lanes);
      const int64_t src =
          p.a_hbm + static_cast<int64_t>(mc) * p.Mb * p.K + static_cast<int64_t>(kt) * p.R;
      const int64_t dst = (base + static_cast<int64_t>(kt) * p.Mb) * m_spec.lanes;
      const int64_t at = place_dma(kPanel, desired, Opcode::DMAHV2, dst, src, desc);
      if (kt == p.KT - 1) m_panel_last_dma.push_back(at);
    }
  }
}

// A streamed panel: one DMA per K step into its region, issued kPanelLead K steps ahead (the
// first kPanelLead in the prologue) and after the last input load of the region's previous K step.
void GemmGenerator::emit_streamed_panel_dmas() {
  const GemmPlan& p = m_plan;
  std::vector<int64_t> last_user(static_cast<size_t>(p.panel_ring) + 2, -1);  // per region
  for (size_t g = 0; g < m_kstep_tile.size(); ++g) {
    const Tile& t = m_tiles[m_kstep_tile[g]];
    const int region = m_kstep_region[g];
    int64_t desired = g >= kPanelLead ? A(m_tiles[m_kstep_tile[g - kPanelLead]].first) : 0;
    int64_t& user = last_user[static_cast<size_t>(region)];
    if (user >= 0) {
      const Tile& prev = m_tiles[m_kstep_tile[static_cast<size_t>(user)]];
      desired = std::max(desired, A(push_step(prev, prev.pushes - 1)));
    }
    user = static_cast<int64_t>(g);
    const uint32_t desc = descriptor(rows_valid(t.mc), k_valid(t.kt), p.K, m_spec.lanes);
    const int64_t src =
        p.a_hbm + static_cast<int64_t>(t.mc) * p.Mb * p.K + static_cast<int64_t>(t.kt) * p.R;
    const int64_t dst = (m_panel_base[0] + int64_t{region} * p.Mb) * m_spec.lanes;
    m_kstep_dma.push_back(place_dma(kPanel, desired, Opcode::DMAHV2, dst, src, desc));
  }
}

// Waits, each as late as possible but no later than the first use of what it waits for.
void GemmGenerator::place_waits() {
  const GemmPlan& p = m_plan;
  const bool streamed = p.panel_ring > 0;
  if (!m_a_in_vmem && !streamed)
    place_wait(kFlagPanel, p.KT, B(mlw_step(m_tiles[0], 0) - 2), m_panel_last_dma[0]);
  for (size_t i = 0; i < m_tiles.size(); ++i) {
    const Tile& t = m_tiles[i];
    place_wait(kFlagWeights, 1, B(mlw_step(t, 0) - 2, t.unit), m_weight_dma[i]);
    if (streamed && t.unit == 0)  // before the K step's first input load
      place_wait(kFlagPanel, 1, A(push_step(t, 0) - 2), m_kstep_dma[static_cast<size_t>(t.kstep)]);
    if (t.kt == 0 && t.nt == 0 && t.mc > 0 && !m_a_in_vmem && !streamed)
      place_wait(kFlagPanel, p.KT, A(push_step(t, 0) - 2),
                 m_panel_last_dma[static_cast<size_t>(t.mc)]);
  }
  // Output o stores to a region an earlier output o' used: the DMAs up to o' (completing in
  // order) must have read it before the first store.
  std::vector<int64_t> last_user(2 * static_cast<size_t>(m_units), -1);
  int64_t waited = 0;  // output DMAs waited for
  for (size_t o = 0; o < m_outputs.size(); ++o) {
    const Tile& t = m_tiles[m_outputs[o]];
    int64_t& user = last_user[static_cast<size_t>(m_out_region[o])];
    if (user >= waited) {
      place_wait(kFlagOut, static_cast<int>(user + 1 - waited),
                 A(push_step(t, 0) + m_lag, t.unit) - 1, m_out_dma[static_cast<size_t>(user)]);
      waited = user + 1;
    }
    user = static_cast<int64_t>(o);
  }
  const int outstanding = static_cast<int>(static_cast<int64_t>(m_out_dma.size()) - waited);
  place_wait(kFlagOut, outstanding, m_bb.find_forward(m_bb.size(), SlotClass::Misc),
             m_out_dma.back());
}

// Three passes: the MXU and vector-memory ops at their steps; then the DMAs (in queue order within
// each kind), which take free misc and scalar slots; then the waits.
isa::Program GemmGenerator::generate() {
  GemmPlan& p = m_plan;
  m_rs = p.R / p.S;
  const int latency_pushes = static_cast<int>(ceil_div(p.S + p.R + p.C - 2, p.S)) + 1;
  m_lag = std::min(m_spec.mxu_result_fifo, latency_pushes);
  layout();
  plan_tiles();
  m_bb.put(0, op_d_imm(Opcode::SLI, kRegZero, 0));
  for (size_t i = 0; i < m_tiles.size(); ++i) {
    emit_mlws(i);
    emit_pushes(i);
  }
  if (m_regular) place_slot_toggles();
  if (m_regular) place_out_row_toggles();
  if (m_a_in_vmem) {  // before the first input load, which is steps after the prologue's DMAs
    const int64_t x = m_bb.find_forward(0, SlotClass::Scalar);
    TESSERA_CHECK(x < A(push_step(m_tiles[0], 0) - 2), "gemm: no scalar slot for the panel stride");
    m_bb.put(x, op_d_imm(Opcode::SLI, kRegPanelStride, p.KT));
  }
  for (size_t i = 0; i < m_tiles.size(); ++i) place_weight_dma(i);
  emit_panel_dmas();
  for (size_t o = 0; o < m_outputs.size(); ++o) place_out_dma(o);
  place_waits();

  isa::Program prog;
  const std::vector<isa::Bundle> straight = m_bb.finish();
  for (const isa::Bundle& b : straight)
    for (const isa::Instr& in : b.slot) {
      const int64_t end = in.op == Opcode::VLDS
                              ? static_cast<int64_t>(in.imm) + (p.S - 1) * int64_t{p.KT} + 1
                              : static_cast<int64_t>(in.imm) + p.S;
      if (in.op == Opcode::VLD || in.op == Opcode::VLDS) p.load_rows = std::max(p.load_rows, end);
      if (in.op == Opcode::VLD || in.op == Opcode::VLDS || in.op == Opcode::VST)
        p.vmem_rows = std::max(p.vmem_rows, end);
    }
  if (m_loops) {
    // A trip's taken branch costs a cycle; the array takes S cycles per 2-bundle push, so bodies of
    // >= 192 / S bundles (24 at 8 sublanes) keep it within about 1% when issue is the limit. The
    // regular schedule (a program that does not fit otherwise) also rolls shorter push stretches.
    RollOptions o;
    o.min_body = m_regular ? 12 : std::max(24, 192 / p.S);
    if (m_regular) o.min_saving = 12;
    o.nested = m_nested;
    o.register_bases = m_regular;
    RolledCode rolled = roll_loops(straight, m_spec, o);
    prog.code = std::move(rolled.code);
    p.loops = rolled.loops;
  } else {
    prog.code = straight;
  }
  prog.data.push_back(
      isa::DataSegment{isa::Space::Smem, static_cast<uint64_t>(m_smem_base), m_smem});
  for (int mc = 0; mc < p.MC; ++mc) {
    const int64_t Mp = ceil_div(rows_valid(mc), p.S) * p.S;
    p.formula_cycles +=
        static_cast<int64_t>(p.KT) * ceil_div(p.NT, p.units) * (2ll * p.R + p.C + Mp - 2);
  }
  return prog;
}

}  // namespace

GemmProgram make_gemm(const core::CoreSpec& spec, int M, int K, int N, bool loops) {
  GemmPlacement at;
  at.b_hbm = static_cast<int64_t>(M) * K;
  at.c_hbm = at.b_hbm + static_cast<int64_t>(K) * N;
  return make_gemm(spec, M, K, N, at, loops);
}

GemmProgram make_gemm(const core::CoreSpec& spec, int M, int K, int N, const GemmPlacement& at,
                      bool loops, bool nested) {
  if (M < 1 || K < 1 || N < 1) throw Error("gemm", "M, K and N must be positive");
  GemmPlan plan;
  plan.M = M, plan.K = K, plan.N = N;
  plan.R = spec.mxu_rows, plan.C = spec.mxu_cols, plan.S = spec.sublanes;
  if (plan.R / plan.S < 1 || plan.R % plan.S != 0)
    throw Error("gemm", "MXU rows must be a positive multiple of sublanes");
  const int vregs = kVIn + kRotation * (1 + spec.mxu_count) + 2;  // GemmGenerator's rotations
  if (vregs > spec.vector_regs)
    throw Error("gemm", "the kernel needs " + std::to_string(vregs) + " vector registers for " +
                            std::to_string(spec.mxu_count) + " MXU(s); the core has " +
                            std::to_string(spec.vector_regs));
  plan.KT = static_cast<int>(ceil_div(K, plan.R));
  plan.NT = static_cast<int>(ceil_div(N, plan.C));
  plan.double_buffer = spec.mxu_double_buffer;
  plan.units = spec.mxu_count;
  plan.a_hbm = at.a_hbm;
  plan.b_hbm = at.b_hbm;
  plan.c_hbm = at.c_hbm;
  const int64_t a_end = at.a_in_vmem ? 0 : plan.a_hbm + static_cast<int64_t>(M) * K;
  const int64_t end = std::max(
      {a_end, plan.b_hbm + static_cast<int64_t>(K) * N, plan.c_hbm + static_cast<int64_t>(M) * N});
  if (end * 4 > spec.hbm_bytes || end > INT32_MAX)
    throw Error("gemm", "HBM cannot hold A, B and C");
  auto generate = [&](bool regular) {
    GemmProgram out;
    out.plan = plan;
    GemmGenerator gen(spec, out.plan, at.smem_base, loops, regular, at.a_in_vmem);
    out.program = gen.generate();
    out.plan.tiles = static_cast<int64_t>(out.plan.MC) * out.plan.NT * out.plan.KT;
    return out;
  };
  GemmProgram out = generate(nested);
  const auto fits = [&] {
    return static_cast<int64_t>(out.program.code.size()) <= spec.imem_bundles;
  };
  if (loops && !nested && !fits()) out = generate(true);
  if (!fits())
    throw Error("gemm", "the program needs " + std::to_string(out.program.code.size()) +
                            " bundles; instruction memory holds " +
                            std::to_string(spec.imem_bundles) + " (use a smaller shape)");
  return out;
}

int gemm_panel_rows(const core::CoreSpec& spec, int K) {
  const int S = spec.sublanes;
  const int64_t fixed = layout_rows(spec, K, 0, 1);
  const int64_t per_row = layout_rows(spec, K, 1, 1) - fixed;
  int64_t rows = (spec.vmem_rows() - fixed) / per_row / S * S;
  if (K > spec.mxu_rows) rows = std::min<int64_t>(rows, int64_t{spec.mxu_acc_blocks} * S);
  return static_cast<int>(std::max<int64_t>(0, rows));
}

void add_gemm_operands(isa::Program& program, const GemmPlan& plan, const float* a,
                       const float* b) {
  auto segment = [&](int64_t at, const float* x, int64_t n) {
    isa::DataSegment s{isa::Space::Hbm, static_cast<uint64_t>(at),
                       std::vector<uint32_t>(static_cast<size_t>(n))};
    std::memcpy(s.words.data(), x, sizeof(float) * static_cast<size_t>(n));
    program.data.push_back(std::move(s));
  };
  segment(plan.a_hbm, a, static_cast<int64_t>(plan.M) * plan.K);
  segment(plan.b_hbm, b, static_cast<int64_t>(plan.K) * plan.N);
}

std::vector<float> read_gemm_result(const core::ArchState& state, const GemmPlan& plan) {
  const int64_t n = static_cast<int64_t>(plan.M) * plan.N;
  std::vector<uint32_t> words(static_cast<size_t>(n));
  state.hbm.read_block(plan.c_hbm, words.data(), n);
  std::vector<float> c(words.size());
  std::memcpy(c.data(), words.data(), sizeof(float) * words.size());
  return c;
}

}  // namespace tessera::kernels
