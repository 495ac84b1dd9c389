#include "kernels/loop_roll.h"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <map>
#include <optional>
#include <unordered_map>

#include "common/error.h"
#include "isa/opcodes.h"
#include "isa/operands.h"

namespace tessera::kernels {

namespace {

using isa::Bundle;
using isa::Instr;
using isa::Opcode;
using isa::OperandKind;

constexpr int kZeroReg = 0;
constexpr int kMaskedRegs =
    64;  // scalar registers the roller's masks hold (core.scalar.regs <= 64)

bool is_control(const Instr& in) {
  return isa::op_info(in.op).latency == isa::LatencyClass::Branch;
}

bool has_label(const Instr& in) {
  for (const isa::Operand& o : isa::signature(in.op))
    if (o.kind == OperandKind::Label) return true;
  return false;
}

// How the immediate of an op may vary between copies: not at all, as an sli value, as the
// offset of a memory operand based on the zero register (field `base`), or as a branch target
// (by the distance between the copies: the target relative to the bundle is fixed).
enum class Vary { Fixed, Sli, Mem, Label };
struct SlotVary {
  Vary kind = Vary::Fixed;
  isa::Field base = isa::Field::D;
};

// `based`: a memory operand on any base register varies too (RollOptions::register_bases).
SlotVary slot_vary(const Instr& in, bool zero_ok, bool based) {
  if (in.op == Opcode::SLI) return {Vary::Sli, isa::Field::D};
  if (has_label(in)) return {Vary::Label, isa::Field::D};
  for (const isa::Operand& o : isa::signature(in.op))
    if (o.kind == OperandKind::Mem &&
        (based || (zero_ok && isa::field_value(in, o.field) == kZeroReg)))
      return {Vary::Mem, o.field};
  return {};
}

// The register an induction register of a varying slot starts from: none (-1) for an `sli`
// value or an offset from the zero register, else the memory operand's base register.
int start_register(const Instr& in, const SlotVary& v, bool zero_ok) {
  if (v.kind != Vary::Mem) return -1;
  const int base = isa::field_value(in, v.base);
  return zero_ok && base == kZeroReg ? -1 : base;
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xbf58476d1ce4e5b9ull;
}

uint64_t slot_word(const Instr& in) {
  return static_cast<uint64_t>(in.op) | uint64_t{in.d} << 16 | uint64_t{in.a} << 24 |
         uint64_t{in.b} << 32 | uint64_t{in.c} << 40;
}

struct Region {
  int64_t start = 0, end = 0, period = 0;
  int64_t saving() const { return ((end - start) / period - 1) * period - 2; }
};

// A region turned into a loop: `setup` bundles, then the rewritten body at `top`, `trips` times.
struct Loop {
  int64_t top = 0, length = 0, trips = 0;
  std::vector<Bundle> setup, body;
  int branch_slot = 0;  // the slot of `loop` in the body's last bundle
};

class Roller {
 public:
  Roller(const std::vector<Bundle>& code, const core::CoreSpec& spec, const RollOptions& o)
      : m_code(code), m_spec(spec), m_opt(o), m_n(static_cast<int64_t>(code.size())) {}
  // The two greedy selections of one pass (below): [0] the smaller of largest saving first and
  // shortest period first, [1] shortest period first.
  std::array<std::map<int64_t, Loop>, 2> selections();
  // The code with `loops` rolled.
  RolledCode emit(std::map<int64_t, Loop> loops) const;
  RolledCode run() { return emit(std::move(selections()[m_opt.inside_out ? 1 : 0])); }

 private:
  bool same_shape(int64_t x, int64_t y) const;
  // The register `in`'s varying memory offset is added to is not written in bundles [x, y].
  bool invariant(const Instr& in, int64_t x, int64_t y) const;
  int64_t imm(int64_t x, int s) const {
    return m_code[static_cast<size_t>(x)].slot[static_cast<size_t>(s)].imm;
  }
  bool consistent(int64_t y, int64_t L) const;
  void analyse();
  std::vector<int64_t> candidate_periods() const;
  void regions_for(int64_t L, std::vector<Region>& out) const;
  bool plan(const Region& r, Loop& loop) const;
  std::map<int64_t, Loop> select(const std::vector<Region>& regions) const;
  bool dead_after(int reg, int64_t from) const;
  int free_scalar(const Bundle& b) const;
  // Nested rolling: a copy may start at bundle x (no local loop's body runs across x), and the
  // outer loop's `loop` may go to bundle x.
  bool boundary(int64_t x) const { return x >= m_n || m_cut[static_cast<size_t>(x)] == 0; }
  bool can_close(int64_t x) const {
    return free_scalar(m_code[static_cast<size_t>(x)]) > 0 &&
           m_control[static_cast<size_t>(x)] == 0;
  }
  bool in_loop(int64_t x) const { return m_in_loop[static_cast<size_t>(x)] != 0; }
  Vary vary(int64_t x, int s) const { return m_vary[static_cast<size_t>(x * isa::kNumSlots + s)]; }

  const std::vector<Bundle>& m_code;
  const core::CoreSpec& m_spec;
  RollOptions m_opt;
  int64_t m_n;
  bool m_zero_ok = true;
  std::vector<uint64_t> m_key;
  std::vector<char> m_barrier, m_control;
  // Nested rolling: [x] > 0 if a local loop's body [target, loop] holds x (m_in_loop) or holds
  // x - 1 and x without starting at x (m_cut).
  std::vector<int> m_in_loop, m_cut;
  // Facts of the input code gathered once by analyse(), so that the searches (same_shape over
  // every candidate period, dead_after for every register of every planned region) do not decode
  // instructions again.
  std::vector<Vary> m_vary;  // [x * kNumSlots + s]: slot_vary(...).kind
  std::vector<uint64_t> m_reads,
      m_writes;  // [x]: scalar registers (bit r: s_r, r < 64) read / written
  std::vector<std::vector<int64_t>> m_refs;  // [r]: the bundles that read or write s_r, ascending
  std::vector<std::vector<int64_t>> m_sets;  // [r]: the bundles that write s_r, ascending
  std::vector<int64_t> m_halts;              // the bundles holding a halt, ascending
  struct Branch {
    int64_t at, lowest, highest;  // a bundle with label operands and its lowest and highest target
  };
  std::vector<Branch> m_branches;  // ascending by `at`
};

bool Roller::same_shape(int64_t x, int64_t y) const {
  if (m_barrier[static_cast<size_t>(x)] || m_barrier[static_cast<size_t>(y)]) return false;
  if (m_key[static_cast<size_t>(x)] != m_key[static_cast<size_t>(y)]) return false;
  const Bundle& a = m_code[static_cast<size_t>(x)];
  const Bundle& b = m_code[static_cast<size_t>(y)];
  for (int s = 0; s < isa::kNumSlots; ++s) {
    const Instr& p = a.slot[static_cast<size_t>(s)];
    const Instr& q = b.slot[static_cast<size_t>(s)];
    if (slot_word(p) != slot_word(q)) return false;
    if (vary(x, s) == Vary::Fixed && p.imm != q.imm) return false;
    if (vary(x, s) == Vary::Mem && p.imm != q.imm && !invariant(p, x, y)) return false;
    if (vary(x, s) == Vary::Label && int64_t{p.imm} - x != int64_t{q.imm} - y) return false;
  }
  return true;
}

bool Roller::invariant(const Instr& in, int64_t x, int64_t y) const {
  const int reg = start_register(in, slot_vary(in, m_zero_ok, true), m_zero_ok);
  if (reg < 0) return true;
  if (reg >= kMaskedRegs) return false;
  const std::vector<int64_t>& sets = m_sets[static_cast<size_t>(reg)];
  const auto at = std::lower_bound(sets.begin(), sets.end(), x);
  return at == sets.end() || *at > y;
}

// Copies y, y + L, y + 2L (already of the same shape) have affine immediates.
bool Roller::consistent(int64_t y, int64_t L) const {
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (int64_t{imm(y + L, s)} - imm(y, s) != int64_t{imm(y + 2 * L, s)} - imm(y + L, s))
      return false;
  return true;
}

void Roller::analyse() {
  for (const Bundle& b : m_code)
    for (const Instr& in : b.slot)
      for (isa::RegRef r : isa::written_registers(in))
        if (r.file == isa::RegFile::Scalar && r.index == kZeroReg &&
            !(in.op == Opcode::SLI && in.imm == 0))
          m_zero_ok = false;
  m_key.assign(static_cast<size_t>(m_n), 0);
  m_barrier.assign(static_cast<size_t>(m_n), 0);
  m_control.assign(static_cast<size_t>(m_n), 0);
  std::vector<int> in_loop(static_cast<size_t>(m_n + 1), 0), cut(static_cast<size_t>(m_n + 1), 0);
  m_vary.assign(static_cast<size_t>(m_n * isa::kNumSlots), Vary::Fixed);
  m_reads.assign(static_cast<size_t>(m_n), 0);
  m_writes.assign(static_cast<size_t>(m_n), 0);
  m_refs.assign(kMaskedRegs, {});
  m_sets.assign(kMaskedRegs, {});
  auto mask_of = [](const isa::RegList& regs) {
    uint64_t m = 0;
    for (isa::RegRef r : regs)
      if (r.file == isa::RegFile::Scalar && r.index < kMaskedRegs) m |= uint64_t{1} << r.index;
    return m;
  };
  for (int64_t x = 0; x < m_n; ++x) {
    uint64_t h = 0x1234567;
    bool halt = false, branch = false;
    int64_t lowest = INT64_MAX, highest = INT64_MIN;
    for (int s = 0; s < isa::kNumSlots; ++s) {
      const Instr& in = m_code[static_cast<size_t>(x)].slot[static_cast<size_t>(s)];
      const Vary v = slot_vary(in, m_zero_ok, m_opt.register_bases).kind;
      m_vary[static_cast<size_t>(x * isa::kNumSlots + s)] = v;
      h = mix(h, slot_word(in));
      if (v == Vary::Fixed) h = mix(h, static_cast<uint32_t>(in.imm));
      if (v == Vary::Label) h = mix(h, static_cast<uint64_t>(x - in.imm));
      const bool local = m_opt.nested && in.op == Opcode::LOOP && in.imm >= 0 && in.imm <= x;
      if (is_control(in)) m_control[static_cast<size_t>(x)] = 1;
      if (is_control(in) && !local) m_barrier[static_cast<size_t>(x)] = 1;
      if (local) {
        ++in_loop[static_cast<size_t>(in.imm)];
        --in_loop[static_cast<size_t>(x + 1)];
        ++cut[static_cast<size_t>(in.imm + 1)];
        --cut[static_cast<size_t>(x + 1)];
      }
      if (has_label(in)) {
        if (!local && in.imm >= 0 && in.imm < m_n) m_barrier[static_cast<size_t>(in.imm)] = 1;
        branch = true;
        lowest = std::min<int64_t>(lowest, in.imm);
        highest = std::max<int64_t>(highest, in.imm);
      }
      halt = halt || in.op == Opcode::HALT;
      m_reads[static_cast<size_t>(x)] |= mask_of(isa::read_registers(in));
      m_writes[static_cast<size_t>(x)] |= mask_of(isa::written_registers(in));
    }
    m_key[static_cast<size_t>(x)] = h;
    if (halt) m_halts.push_back(x);
    if (branch) m_branches.push_back({x, lowest, highest});
    for (uint64_t m = m_reads[static_cast<size_t>(x)] | m_writes[static_cast<size_t>(x)]; m != 0;
         m &= m - 1)
      m_refs[static_cast<size_t>(std::countr_zero(m))].push_back(x);
    for (uint64_t m = m_writes[static_cast<size_t>(x)]; m != 0; m &= m - 1)
      m_sets[static_cast<size_t>(std::countr_zero(m))].push_back(x);
  }
  m_in_loop.assign(static_cast<size_t>(m_n), 0);
  m_cut.assign(static_cast<size_t>(m_n), 0);
  int inside = 0, across = 0;
  for (int64_t x = 0; x < m_n; ++x) {
    inside += in_loop[static_cast<size_t>(x)];
    across += cut[static_cast<size_t>(x)];
    m_in_loop[static_cast<size_t>(x)] = inside;
    m_cut[static_cast<size_t>(x)] = across;
  }
}

// Periods worth scanning: distances to the previous occurrence of the same 4-bundle window, the
// most frequent first.
std::vector<int64_t> Roller::candidate_periods() const {
  constexpr int64_t kWindow = 4;
  std::unordered_map<uint64_t, int64_t> last;
  std::map<int64_t, int64_t> count;
  int64_t barriers = 0;  // in the window [x, x + kWindow)
  for (int64_t x = 0; x < m_n; ++x) {
    barriers += m_barrier[static_cast<size_t>(x)];
    if (x >= kWindow) barriers -= m_barrier[static_cast<size_t>(x - kWindow)];
    if (x + 1 < kWindow || barriers > 0) continue;
    uint64_t h = 0;
    for (int64_t k = x + 1 - kWindow; k <= x; ++k) h = mix(h, m_key[static_cast<size_t>(k)]);
    auto [it, inserted] = last.try_emplace(h, x);
    if (inserted) continue;
    const int64_t L = x - it->second;
    it->second = x;
    if (L <= m_opt.max_period) ++count[L];
  }
  std::vector<std::pair<int64_t, int64_t>> by_count;
  for (auto [L, c] : count)
    if (c >= 8) by_count.push_back({c, L});
  std::sort(by_count.rbegin(), by_count.rend());
  // Shapes may repeat sooner than immediates become affine (a ring of buffers, rotating
  // registers): small multiples of the frequent periods too.
  std::vector<int64_t> out;
  for (size_t i = 0; i < by_count.size() && i < 24; ++i)
    for (int64_t m : {1, 2, 3, 4, 6, 12}) {
      const int64_t L = by_count[i].second * m;
      if (L <= m_opt.max_period && std::find(out.begin(), out.end(), L) == out.end())
        out.push_back(L);
    }
  return out;
}

// Maximal regions of period L: runs of x with same_shape(x, x + L), split where the immediates
// stop being affine.
void Roller::regions_for(int64_t L, std::vector<Region>& out) const {
  auto emit = [&](int64_t start, int64_t end) {
    const Region r{start, end, L};
    if ((end - start) / L >= 2 && r.saving() >= m_opt.min_saving) out.push_back(r);
  };
  int64_t x = 0;
  while (x + L < m_n) {
    if (!same_shape(x, x + L)) {
      ++x;
      continue;
    }
    int64_t j = x;
    while (j + L < m_n && same_shape(j, j + L)) ++j;
    int64_t start = x;
    for (int64_t y = x; y < j - L; ++y)
      if (!consistent(y, L)) {
        emit(start, y + 2 * L);
        start = y + 1;
      }
    emit(start, j + L);
    x = j;
  }
}

int Roller::free_scalar(const Bundle& b) const {
  int n = 0;
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (isa::kSlotClass[static_cast<size_t>(s)] == isa::SlotClass::Scalar &&
        b.slot[static_cast<size_t>(s)].op == Opcode::NOP)
      ++n;
  return n;
}

// True if scalar register `reg` (< 64) is written before it is read from bundle `from` on (or
// never referenced again before a halt or the end). A branch back into [from, here) was scanned
// already; any other branch ends the scan (not dead). Within a bundle: a read decides "not
// dead", else a write or halt "dead", else a branch leaving the scanned code "not dead".
// The scan visits only the bundles that can decide: the next reference of reg, the next halt and
// the branches before them.
bool Roller::dead_after(int reg, int64_t from) const {
  const std::vector<int64_t>& refs = m_refs[static_cast<size_t>(reg)];
  const auto ref = std::lower_bound(refs.begin(), refs.end(), from);
  const auto halt = std::lower_bound(m_halts.begin(), m_halts.end(), from);
  const int64_t stop =
      std::min(ref == refs.end() ? m_n : *ref, halt == m_halts.end() ? m_n : *halt);
  auto branch = std::lower_bound(m_branches.begin(), m_branches.end(), from,
                                 [](const Branch& b, int64_t x) { return b.at < x; });
  for (; branch != m_branches.end() && branch->at < stop; ++branch)
    if (branch->lowest < from || branch->highest > branch->at) return false;
  if (stop == m_n) return true;
  return (m_reads[static_cast<size_t>(stop)] >> reg & 1) == 0;  // written, or a halt
}

void put_scalar(Bundle& b, const Instr& in) {
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (isa::kSlotClass[static_cast<size_t>(s)] == isa::SlotClass::Scalar &&
        b.slot[static_cast<size_t>(s)].op == Opcode::NOP) {
      b.slot[static_cast<size_t>(s)] = in;
      return;
    }
  TESSERA_CHECK(false, "loop roll: no free scalar slot");
}

Instr scalar_op(Opcode op, int d, int a, int64_t imm) {
  Instr in{op};
  in.d = static_cast<uint8_t>(d);
  in.a = static_cast<uint8_t>(a);
  in.imm = static_cast<int32_t>(imm);
  return in;
}

// Chooses the body length (a multiple of the period, at least min_body when there are trips
// enough), the rotation whose last bundle has a free scalar slot for `loop`, the registers and the
// increments; false if the region cannot be rolled.
bool Roller::plan(const Region& r, Loop& loop) const {
  const int64_t span = r.end - r.start;
  int64_t k = std::max<int64_t>(1, (m_opt.min_body + r.period - 1) / r.period);
  k = std::max<int64_t>(1, std::min(k, span / (2 * r.period)));
  const int64_t L = k * r.period;
  int64_t o = 0;
  while (o < L && (span - o) / L >= 2 && !(can_close(r.start + o + L - 1) && boundary(r.start + o)))
    ++o;
  if (o >= L || (span - o) / L < 2) return false;
  loop.top = r.start + o;
  loop.length = L;
  loop.trips = (span - o) / L;
  while (loop.trips >= 2 && !boundary(loop.top + loop.trips * L)) --loop.trips;
  if (loop.trips < 2 || (loop.trips - 1) * L < m_opt.min_saving) return false;
  const int64_t end = loop.top + loop.trips * L;

  // Deltas of the affine immediates, per body slot, and the induction registers: one per
  // distinct (delta, start register).
  std::vector<std::array<int64_t, isa::kNumSlots>> delta(static_cast<size_t>(L));
  std::vector<std::pair<int64_t, int>> distinct;
  uint64_t body_writes = 0;
  for (int64_t j = 0; j < L; ++j) body_writes |= m_writes[static_cast<size_t>(loop.top + j)];
  auto induction = [&](int64_t j, int s) {
    const Instr& in = m_code[static_cast<size_t>(loop.top + j)].slot[static_cast<size_t>(s)];
    return std::pair{delta[static_cast<size_t>(j)][static_cast<size_t>(s)],
                     start_register(in, slot_vary(in, m_zero_ok, m_opt.register_bases), m_zero_ok)};
  };
  for (int64_t j = 0; j < L; ++j)
    for (int s = 0; s < isa::kNumSlots; ++s) {
      const int64_t d = vary(loop.top + j, s) == Vary::Label
                            ? 0
                            : int64_t{imm(loop.top + j + L, s)} - imm(loop.top + j, s);
      delta[static_cast<size_t>(j)][static_cast<size_t>(s)] = d;
      if (d == 0) continue;
      if (std::abs(d) * (loop.trips - 1) > INT32_MAX ||
          int64_t{imm(loop.top + j, s)} - d < INT32_MIN ||
          int64_t{imm(loop.top + j, s)} - d > INT32_MAX)
        return false;
      const auto key = induction(j, s);
      if (key.second >= 0 && (body_writes >> key.second & 1) != 0) return false;
      if (std::find(distinct.begin(), distinct.end(), key) == distinct.end())
        distinct.push_back(key);
    }

  // Registers: untouched by the body, dead after the loop.
  uint64_t used = uint64_t{1} << kZeroReg;
  for (int64_t j = 0; j < L; ++j)
    used |=
        m_reads[static_cast<size_t>(loop.top + j)] | m_writes[static_cast<size_t>(loop.top + j)];
  std::vector<int> regs;
  for (int reg = std::min(m_spec.scalar_regs, kMaskedRegs) - 1;
       reg > 0 && regs.size() < distinct.size() + 1; --reg)
    if ((used >> reg & 1) == 0 && dead_after(reg, end)) regs.push_back(reg);
  if (regs.size() < distinct.size() + 1) return false;

  // Slots: `loop` in the last bundle, the increments as late as possible.
  loop.body.assign(m_code.begin() + loop.top, m_code.begin() + loop.top + L);
  int free = 0;
  for (int64_t b = 0; b < L; ++b)
    if (!in_loop(loop.top + b)) free += free_scalar(loop.body[static_cast<size_t>(b)]);
  if (free < static_cast<int>(distinct.size()) + 1) return false;
  const int counter = regs[0];
  put_scalar(loop.body.back(), scalar_op(Opcode::LOOP, 0, counter, 0));  // target set by the caller
  for (int s = 0; s < isa::kNumSlots; ++s)
    if (loop.body.back().slot[static_cast<size_t>(s)].op == Opcode::LOOP) loop.branch_slot = s;
  std::vector<int64_t> inc_at(distinct.size(), -1);
  int64_t j = L - 1;
  for (size_t i = 0; i < distinct.size(); ++i) {
    while (free_scalar(loop.body[static_cast<size_t>(j)]) == 0 || in_loop(loop.top + j)) --j;
    put_scalar(loop.body[static_cast<size_t>(j)],
               scalar_op(Opcode::SADDI, regs[i + 1], regs[i + 1], distinct[i].first));
    inc_at[i] = j;
  }

  // Rewrite the affine slots of the body. Nested rolling: each induction register starts at the
  // first copy's immediate of its first affine slot.
  std::vector<int64_t> base(distinct.size(), 0);
  std::vector<bool> seen(distinct.size(), !m_opt.nested);
  for (int64_t b = 0; b < L; ++b)
    for (int s = 0; s < isa::kNumSlots; ++s) {
      const int64_t d = delta[static_cast<size_t>(b)][static_cast<size_t>(s)];
      if (d == 0) continue;
      const size_t i = static_cast<size_t>(
          std::find(distinct.begin(), distinct.end(), induction(b, s)) - distinct.begin());
      Instr& in = loop.body[static_cast<size_t>(b)].slot[static_cast<size_t>(s)];
      const SlotVary v = slot_vary(in, m_zero_ok, m_opt.register_bases);
      TESSERA_CHECK(v.kind != Vary::Fixed, "loop roll: a fixed immediate varies");
      if (!seen[i]) {
        seen[i] = true;
        base[i] = in.imm;
      }
      const int32_t value = static_cast<int32_t>(in.imm - base[i] - (b > inc_at[i] ? d : 0));
      if (v.kind == Vary::Sli) {
        in = scalar_op(Opcode::SADDI, in.d, regs[i + 1], value);
      } else {
        isa::set_field(in, v.base, static_cast<uint8_t>(regs[i + 1]));
        in.imm = value;
      }
    }

  // Setup: the trip count and the induction registers at their start (plus their start register,
  // which the body does not write), two per bundle.
  std::vector<Instr> init{scalar_op(Opcode::SLI, counter, 0, loop.trips)};
  for (size_t i = 0; i < distinct.size(); ++i)
    init.push_back(distinct[i].second < 0
                       ? scalar_op(Opcode::SLI, regs[i + 1], 0, base[i])
                       : scalar_op(Opcode::SADDI, regs[i + 1], distinct[i].second, base[i]));
  for (size_t i = 0; i < init.size(); ++i) {
    if (i % 2 == 0) loop.setup.emplace_back();
    put_scalar(loop.setup.back(), init[i]);
  }
  return true;
}

// The loops of one greedy selection over `regions` (in that order, skipping overlaps).
std::map<int64_t, Loop> Roller::select(const std::vector<Region>& regions) const {
  std::map<int64_t, Loop> loops;     // by top
  std::map<int64_t, int64_t> taken;  // accepted [start, end) by start
  auto overlaps = [&](int64_t s, int64_t e) {
    auto it = taken.upper_bound(s);
    if (it != taken.end() && it->first < e) return true;
    if (it != taken.begin() && std::prev(it)->second > s) return true;
    return false;
  };
  for (const Region& r : regions) {
    if (overlaps(r.start, r.end)) continue;
    Loop loop;
    if (!plan(r, loop)) continue;
    const int64_t end = loop.top + loop.trips * loop.length;
    if (overlaps(loop.top, end)) continue;
    taken[loop.top] = end;
    loops.emplace(loop.top, std::move(loop));
  }
  return loops;
}

int64_t rolled_size(int64_t n, const std::map<int64_t, Loop>& loops) {
  for (const auto& [top, loop] : loops)
    n -= (loop.trips - 1) * loop.length - static_cast<int64_t>(loop.setup.size());
  return n;
}

std::array<std::map<int64_t, Loop>, 2> Roller::selections() {
  analyse();
  std::vector<Region> regions;
  for (int64_t L : candidate_periods()) regions_for(L, regions);
  // Two greedy orders, the smaller result kept: largest saving first, and shortest period first
  // (a long period's body is straight code that shorter loops could have compressed; the rolling
  // is one level deep).
  std::stable_sort(regions.begin(), regions.end(),
                   [](const Region& a, const Region& b) { return a.saving() > b.saving(); });
  std::map<int64_t, Loop> loops = select(regions);
  std::stable_sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return a.period != b.period ? a.period < b.period : a.saving() > b.saving();
  });
  std::map<int64_t, Loop> short_first = select(regions);
  if (rolled_size(m_n, short_first) < rolled_size(m_n, loops)) loops = short_first;
  return {std::move(loops), std::move(short_first)};
}

RolledCode Roller::emit(std::map<int64_t, Loop> loops) const {
  RolledCode out;
  out.new_index.assign(static_cast<size_t>(m_n), -1);
  std::vector<std::pair<size_t, size_t>> remap;  // (bundle, slot) whose label is an input index
  auto copy = [&](int64_t x, const Bundle& b) {
    out.new_index[static_cast<size_t>(x)] = static_cast<int64_t>(out.code.size());
    for (size_t s = 0; s < b.slot.size(); ++s)
      if (has_label(b.slot[s])) remap.push_back({out.code.size(), s});
    out.code.push_back(b);
  };
  int64_t x = 0;
  for (auto& [top, loop] : loops) {
    for (; x < top; ++x) copy(x, m_code[static_cast<size_t>(x)]);
    for (const Bundle& b : loop.setup) out.code.push_back(b);
    const auto target = static_cast<int32_t>(out.code.size());
    loop.body.back().slot[static_cast<size_t>(loop.branch_slot)].imm = target;
    for (int64_t j = 0; j < loop.length; ++j) {
      out.new_index[static_cast<size_t>(top + j)] = static_cast<int64_t>(out.code.size());
      const Bundle& b = loop.body[static_cast<size_t>(j)];
      for (size_t s = 0; s < b.slot.size(); ++s)  // inner loops: targets in the first copy
        if (has_label(b.slot[s]) &&
            !(j == loop.length - 1 && static_cast<int>(s) == loop.branch_slot))
          remap.push_back({out.code.size(), s});
      out.code.push_back(b);
    }
    x = top + loop.trips * loop.length;
    ++out.loops;
  }
  for (; x < m_n; ++x) copy(x, m_code[static_cast<size_t>(x)]);
  for (auto [b, s] : remap) {
    Instr& in = out.code[b].slot[s];
    TESSERA_CHECK(in.imm >= 0 && in.imm < m_n && out.new_index[static_cast<size_t>(in.imm)] >= 0,
                  "loop roll: a branch target was rolled away");
    in.imm = static_cast<int32_t>(out.new_index[static_cast<size_t>(in.imm)]);
  }
  return out;
}

}  // namespace

RolledCode roll_loops(const std::vector<Bundle>& code, const core::CoreSpec& spec,
                      const RollOptions& options) {
  if (!options.nested) return Roller(code, spec, options).run();
  // Nested: each pass rolls the loops of the previous one into outer loops. Two orders, the
  // smaller result kept: each pass's smaller selection, and shortest periods first in every pass
  // (loops built from the inside out, so that a later pass rolls the short loops' copies).
  // The first pass's analysis of the (long) input is shared by both orders.
  Roller first(code, spec, options);
  std::array<std::map<int64_t, Loop>, 2> firsts = first.selections();
  std::optional<RolledCode> best;
  for (const bool inside_out : {false, true}) {
    RollOptions o = options;
    o.inside_out = inside_out;
    RolledCode out = first.emit(std::move(firsts[inside_out ? 1 : 0]));
    for (;;) {
      RolledCode next = Roller(out.code, spec, o).run();
      if (next.loops == 0) break;
      for (int64_t& i : out.new_index)
        if (i >= 0) i = next.new_index[static_cast<size_t>(i)];
      out.code = std::move(next.code);
      out.loops += next.loops;
    }
    if (!best || out.code.size() < best->code.size()) best = std::move(out);
  }
  return std::move(*best);
}

}  // namespace tessera::kernels
