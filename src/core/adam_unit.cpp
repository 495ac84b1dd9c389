#include "core/adam_unit.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "common/error.h"
#include "common/int_math.h"
#include "core/fault.h"
#include "numerics/adam.h"

namespace tessera::core {

using isa::AdamInstr;
using isa::AdamOp;

namespace {

void put_f64(std::array<uint32_t, kAdamHyperWords>& w, int at, double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  w[static_cast<size_t>(at)] = static_cast<uint32_t>(bits);
  w[static_cast<size_t>(at) + 1] = static_cast<uint32_t>(bits >> 32);
}

double get_f64(const uint32_t* w, int at) {
  return std::bit_cast<double>(static_cast<uint64_t>(w[at]) |
                               (static_cast<uint64_t>(w[at + 1]) << 32));
}

// "" when h is acceptable, else the reason.
std::string hyper_problem(const AdamHyper& h) {
  const auto bad = [](double x) { return !std::isfinite(x); };
  if (bad(h.lr) || h.lr < 0)
    return fmt::format("alpha (learning rate) = {} must be finite and >= 0", h.lr);
  if (bad(h.b1) || h.b1 < 0 || h.b1 >= 1) return fmt::format("beta1 = {} outside [0, 1)", h.b1);
  if (bad(h.b2) || h.b2 < 0 || h.b2 >= 1) return fmt::format("beta2 = {} outside [0, 1)", h.b2);
  if (bad(h.eps) || h.eps < 0) return fmt::format("epsilon = {} must be finite and >= 0", h.eps);
  if (bad(h.ct) || h.ct < 0)
    return fmt::format("convergence threshold = {} must be finite and >= 0", h.ct);
  if (bad(h.weight_decay) || h.weight_decay < 0)
    return fmt::format("weight decay = {} must be finite and >= 0", h.weight_decay);
  return "";
}

// The bit patterns of n floats of a buffer (one stream for the HBM encoding).
std::span<const uint32_t> words_of(const std::vector<float>& buffer, int64_t n) {
  return {reinterpret_cast<const uint32_t*>(buffer.data()), static_cast<size_t>(n)};
}

}  // namespace

std::array<uint32_t, kAdamHyperWords> adam_hyper_words(const AdamHyper& h) {
  std::array<uint32_t, kAdamHyperWords> w{};
  put_f64(w, 0, h.lr);
  put_f64(w, 2, h.b1);
  put_f64(w, 4, h.b2);
  put_f64(w, 6, h.eps);
  put_f64(w, 8, h.ct);
  put_f64(w, 10, h.weight_decay);
  w[12] = h.max_iters;
  return w;
}

void validate_adam_hyper(const AdamHyper& h) {
  if (const std::string why = hyper_problem(h); !why.empty())
    throw Error("adam hyperparameters", why);
}

int64_t AdamHbmPath::occupy(int64_t earliest, int64_t cycles) {
  int64_t t = earliest, left = cycles;
  auto it = m_busy.upper_bound(t);
  if (it != m_busy.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
  int64_t end = t;
  while (left > 0) {
    const int64_t gap_end = it == m_busy.end() ? INT64_MAX : it->first;
    const int64_t take = std::min(left, gap_end - t);
    if (take > 0) {
      // Insert [t, t + take), merging with neighbours.
      int64_t s = t, e = t + take;
      auto prev = m_busy.lower_bound(s);
      if (prev != m_busy.begin() && std::prev(prev)->second == s) {
        prev = std::prev(prev);
        s = prev->first;
        m_busy.erase(prev);
      }
      auto next = m_busy.find(e);
      if (next != m_busy.end()) {
        e = next->second;
        m_busy.erase(next);
      }
      m_busy[s] = e;
      m_log.emplace_back(t, t + take);
      left -= take;
      end = t + take;
      it = m_busy.upper_bound(s);
      t = e;
    } else {
      t = it->second;
      ++it;
    }
  }
  return end;
}

void AdamHbmPath::block(int64_t from, int64_t to) {
  if (to <= from) return;
  const size_t logged = m_log.size();
  occupy(from, to - from);
  m_log.resize(logged);  // the core's cycles, not the unit's
}

void AdamHbmPath::forget_before(int64_t now) {
  while (!m_busy.empty() && m_busy.begin()->second < now) m_busy.erase(m_busy.begin());
}

AdamUnit::AdamUnit(const CoreSpec& spec)
    : m_spec(spec.adam), m_energy(spec.energy), m_slots(static_cast<size_t>(spec.adam.buffers)) {
  const auto b = static_cast<size_t>(m_spec.block_elements);
  m_theta.resize(b), m_prev.resize(b), m_g.resize(b), m_bm.resize(b), m_bv.resize(b);
}

int64_t AdamUnit::spill_v(int64_t i) const {
  return m_spill + (m_n - m_resident_blocks * m_spec.block_elements) +
         (i - m_resident_blocks * m_spec.block_elements);
}

float AdamUnit::m_at(const PagedMemory& hbm, int64_t i) const {
  if (i < static_cast<int64_t>(m_m.size())) return m_m[static_cast<size_t>(i)];
  return std::bit_cast<float>(hbm.read(spill_m(i)));
}

float AdamUnit::v_at(const PagedMemory& hbm, int64_t i) const {
  if (i < static_cast<int64_t>(m_v.size())) return m_v[static_cast<size_t>(i)];
  return std::bit_cast<float>(hbm.read(spill_v(i)));
}

void AdamUnit::set_moments(PagedMemory& hbm, int64_t i, float m, float v) {
  if (m_n == 0 || i < 0 || i >= m_n)
    throw Error("adam unit",
                fmt::format("moments of element {}: the unit is assigned {} parameters", i, m_n));
  if (i < static_cast<int64_t>(m_m.size())) {
    m_m[static_cast<size_t>(i)] = m, m_v[static_cast<size_t>(i)] = v;
    return;
  }
  hbm.write(spill_m(i), std::bit_cast<uint32_t>(m));
  hbm.write(spill_v(i), std::bit_cast<uint32_t>(v));
}

void AdamUnit::set_t(int64_t t) {
  if (t < 0) throw Error("adam unit", fmt::format("step count must be >= 0, got {}", t));
  m_t = t;
}

void AdamUnit::check_hbm(std::string_view what, int64_t addr, int64_t words) const {
  if (addr < 0 || addr + words > m_hbm->size())
    throw UnitFault(fmt::format("adam unit: {}: HBM words [{}, {}) outside [0, {})", what, addr,
                                addr + words, m_hbm->size()));
}

int64_t AdamUnit::hbm_bytes(std::initializer_list<std::span<const uint32_t>> chunks, HbmKind kind) {
  if (m_encoder != nullptr) return m_encoder->charge_chunks(chunks, kind);
  int64_t bytes = 0;
  for (std::span<const uint32_t> c : chunks) bytes += 4 * static_cast<int64_t>(c.size());
  return bytes;
}

int64_t AdamUnit::dma(int64_t earliest, int64_t bytes) {
  const auto cycles =
      static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / m_spec.dma_bytes_per_cycle));
  m_stats.busy[static_cast<int>(AdamSub::Dma)] += cycles;
  ++m_stats.micro_ops;
  const int64_t done = m_path.occupy(earliest + m_spec.dma_latency, std::max<int64_t>(cycles, 1));
  m_last = std::max(m_last, done);
  return done;
}

int64_t AdamUnit::sub_start(int64_t ready, std::initializer_list<AdamSub> subs) const {
  int64_t t = ready;
  for (AdamSub s : subs) t = std::max(t, m_free[static_cast<int>(s)]);
  return t;
}

void AdamUnit::occupy(AdamSub s, int64_t start, int64_t elements, int width) {
  const int64_t cycles = ceil_div(elements, width);
  const int i = static_cast<int>(s);
  m_free[i] = start + cycles;
  m_stats.busy[i] += cycles;
  m_stats.elements[i] += elements;
  ++m_stats.micro_ops;
}

int64_t AdamUnit::block_len() const {
  return std::min(m_spec.block_elements, m_n - block_base());
}

void AdamUnit::need_hyper_and_assign(std::string_view what) const {
  if (!m_has_hyper) throw UnitFault(fmt::format("adam unit: {} before HYPERPARAMETER_IO", what));
  if (m_n == 0) throw UnitFault(fmt::format("adam unit: {} before ASSIGN", what));
}

void AdamUnit::fetch_program(int64_t addr, uint32_t count, Issue& is) {
  if (count < 1 || count > m_spec.icache_instrs)
    throw UnitFault(fmt::format(
        "adam unit: INSTRUCTION_IO of {} instructions; the instruction cache holds 1..{}", count,
        m_spec.icache_instrs));
  check_hbm("INSTRUCTION_IO", addr, 2 * static_cast<int64_t>(count));
  std::vector<uint32_t> words(2 * static_cast<size_t>(count));
  m_hbm->read_block(addr, words.data(), static_cast<int64_t>(words.size()));
  m_icache.clear();
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t w = words[2 * i] | (static_cast<uint64_t>(words[2 * i + 1]) << 32);
    try {
      m_icache.push_back(isa::adam_decode(w, i));
    } catch (const Error& e) {
      throw UnitFault(fmt::format("adam unit: {}", e.what()));
    }
  }
  const int64_t bytes = hbm_bytes({words}, HbmKind::kOther);
  m_stats.instr_bytes += bytes;
  is.done = dma(is.at, bytes);
}

void AdamUnit::read_hyper(int64_t addr, Issue& is) {
  check_hbm("HYPERPARAMETER_IO", addr, kAdamHyperWords);
  uint32_t w[kAdamHyperWords];
  m_hbm->read_block(addr, w, kAdamHyperWords);
  AdamHyper h;
  h.lr = get_f64(w, 0), h.b1 = get_f64(w, 2), h.b2 = get_f64(w, 4), h.eps = get_f64(w, 6);
  h.ct = get_f64(w, 8), h.weight_decay = get_f64(w, 10), h.max_iters = w[12];
  if (const std::string why = hyper_problem(h); !why.empty())
    throw UnitFault(fmt::format("adam unit: HYPERPARAMETER_IO: {}", why));
  if (w[13] != 0 || w[14] != 0 || w[15] != 0)
    throw UnitFault("adam unit: HYPERPARAMETER_IO: words 13..15 of the block must be zero");
  m_hyper = h;
  m_has_hyper = true;
  m_const = numerics::adam_constants(h.b1, h.b2, h.eps);
  m_decay = numerics::adamw_decay_factor(h.lr, h.weight_decay);
  const int64_t bytes = hbm_bytes({std::span<const uint32_t>(w)}, HbmKind::kOther);
  m_stats.hyper_bytes += bytes;
  const int64_t loaded = dma(is.at, bytes);
  // basic sub-module: 1 - b1, 1 - b2, 1 - lr*wd (three fp64 ops, rounded to fp32)
  const int64_t s = sub_start(loaded, {AdamSub::Basic});
  occupy(AdamSub::Basic, s, 3, 1);
  m_hyper_ready = s + 3 * static_cast<int64_t>(m_spec.basic_latency);
  is.done = m_hyper_ready;
}

void AdamUnit::assign(int64_t spill, uint32_t n, Issue& is) {
  if (!m_has_hyper) throw UnitFault("adam unit: ASSIGN before HYPERPARAMETER_IO");
  if (n == 0) throw UnitFault("adam unit: ASSIGN of 0 elements");
  const int64_t B = m_spec.block_elements;
  m_n = n;
  m_blocks = ceil_div(n, B);
  m_resident_blocks = std::min(m_blocks, m_spec.dcache_bytes / (8 * B));
  const int64_t resident = std::min<int64_t>(n, m_resident_blocks * B);
  const int64_t spilled = m_n - resident;
  m_spill = spill;
  if (spilled > 0) check_hbm("ASSIGN spill area", spill, 2 * spilled);
  m_m.assign(static_cast<size_t>(resident), 0.0f);
  m_v.assign(static_cast<size_t>(resident), 0.0f);
  m_t = 0, m_block = 0, m_iterations = 0, m_sum = 0, m_temp2 = 0, m_converged = false;
  int64_t done = is.at + 1;
  if (resident > 0) {
    const int64_t s = std::max(is.at, m_free[static_cast<int>(AdamSub::DCache)]);
    occupy(AdamSub::DCache, s, 8 * resident, static_cast<int>(m_spec.dcache_bytes_per_cycle));
    m_stats.dcache_write_bytes += 8 * resident;
    done = m_free[static_cast<int>(AdamSub::DCache)];
  }
  if (spilled > 0) {
    const std::vector<uint32_t> zeros(static_cast<size_t>(2 * spilled), 0u);
    m_hbm->write_block(spill, zeros.data(), 2 * spilled);
    const int64_t bytes = hbm_bytes({zeros}, HbmKind::kOptimizerState);
    m_stats.spill_out_bytes += bytes;
    done = std::max(done, dma(is.at, bytes));
  }
  m_last = std::max(m_last, done);
  is.done = done;
}

void AdamUnit::exec_data(const AdamInstr& in, Issue& is) {
  const int64_t base = block_base(), len = block_len();
  Slot& sl = m_slots[static_cast<size_t>(m_block % m_spec.buffers)];
  switch (in.op) {
    case AdamOp::DIO: {
      need_hyper_and_assign("DATA_IO");
      if (m_t == 0) throw UnitFault("adam unit: DATA_IO before MOMENT_ESTIMATE (no step started)");
      const int64_t ta = m_areg[in.a] + base, ga = m_areg[in.b] + base;
      if (m_block == 0 && m_hook) m_hook(*m_hbm, m_t);
      check_hbm("DATA_IO theta", ta, len);
      check_hbm("DATA_IO g", ga, len);
      m_hbm->read_block(ta, reinterpret_cast<uint32_t*>(m_theta.data()), len);
      m_hbm->read_block(ga, reinterpret_cast<uint32_t*>(m_g.data()), len);
      std::memcpy(m_prev.data(), m_theta.data(), static_cast<size_t>(len) * 4);
      const int64_t theta_bytes = hbm_bytes({words_of(m_theta, len)}, HbmKind::kWeights);
      const int64_t g_bytes = hbm_bytes({words_of(m_g, len)}, HbmKind::kGradients);
      m_stats.theta_in_bytes += theta_bytes, m_stats.g_in_bytes += g_bytes;
      m_stats.buffer_bytes += 8 * len;
      is.at = std::max(is.at, sl.free);
      const int64_t a = dma(is.at, theta_bytes);
      sl.data_ready = std::max(a, dma(is.at, g_bytes));
      is.done = sl.data_ready;
      return;
    }
    case AdamOp::XFERIN:
    case AdamOp::XFEROUT: {
      need_hyper_and_assign("TRANSFER");
      const bool to_module = in.op == AdamOp::XFERIN;
      if (block_spilled()) {
        for (int64_t i = 0; i < len; ++i) {
          const int64_t e = base + i;
          float& cm = m_bm[static_cast<size_t>(i)];
          float& cv = m_bv[static_cast<size_t>(i)];
          if (to_module) {
            cm = std::bit_cast<float>(m_hbm->read(spill_m(e)));
            cv = std::bit_cast<float>(m_hbm->read(spill_v(e)));
          } else {
            m_hbm->write(spill_m(e), std::bit_cast<uint32_t>(cm));
            m_hbm->write(spill_v(e), std::bit_cast<uint32_t>(cv));
          }
        }
      } else if (to_module) {  // resident: the data cache's words, copied as a block
        std::copy_n(m_m.begin() + base, len, m_bm.begin());
        std::copy_n(m_v.begin() + base, len, m_bv.begin());
      } else {
        std::copy_n(m_bm.begin(), len, m_m.begin() + base);
        std::copy_n(m_bv.begin(), len, m_v.begin() + base);
      }
      m_stats.buffer_bytes += 8 * len;
      if (to_module) is.at = std::max(is.at, sl.free);
      const int64_t ready = to_module ? is.at : std::max(is.at, sl.mupd_done);
      int64_t done;
      if (block_spilled()) {
        const int64_t bytes =
            hbm_bytes({words_of(m_bm, len), words_of(m_bv, len)}, HbmKind::kOptimizerState);
        (to_module ? m_stats.spill_in_bytes : m_stats.spill_out_bytes) += bytes;
        done = dma(ready, bytes);
      } else {
        (to_module ? m_stats.dcache_read_bytes : m_stats.dcache_write_bytes) += 8 * len;
        const int64_t s = std::max(ready, m_free[static_cast<int>(AdamSub::DCache)]);
        occupy(AdamSub::DCache, s, 8 * len, static_cast<int>(m_spec.dcache_bytes_per_cycle));
        done = m_free[static_cast<int>(AdamSub::DCache)];
      }
      (to_module ? sl.mv_ready : sl.mvout_done) = done;
      m_last = std::max(m_last, done);
      is.done = done;
      return;
    }
    default: {  // DBIO
      need_hyper_and_assign("DATABACK_IO");
      const int64_t ta = m_areg[in.a] + base;
      check_hbm("DATABACK_IO theta", ta, len);
      m_hbm->write_block(ta, reinterpret_cast<const uint32_t*>(m_theta.data()), len);
      const int64_t bytes = hbm_bytes({words_of(m_theta, len)}, HbmKind::kWeights);
      m_stats.theta_out_bytes += bytes;
      m_stats.buffer_bytes += 4 * len;
      const int64_t start = std::max(is.at, sl.pupd_done);
      const int64_t done = dma(start, bytes);
      // The DMA reads the buffer at the path's rate as it leaves; the latency is the flight to HBM.
      sl.free = std::max(done - m_spec.dma_latency, sl.mvout_done);
      is.done = done;
      return;
    }
  }
}

void AdamUnit::exec_compute(const AdamInstr& in, Issue& is) {
  const int64_t len = block_len();
  Slot& sl = m_slots[static_cast<size_t>(m_block % m_spec.buffers)];
  const AdamUnitSpec& p = m_spec;
  if (in.op == AdamOp::MUPD) {
    need_hyper_and_assign("MOMENT_UPDATE");
    numerics::adam_moments(m_bm.data(), m_bv.data(), m_g.data(), len, m_const);
    const int64_t s = sub_start(std::max({is.at, sl.data_ready, sl.mv_ready, m_hyper_ready}),
                                {AdamSub::Mul, AdamSub::Add});
    occupy(AdamSub::Mul, s, 5 * len, p.mul.width);
    occupy(AdamSub::Add, s, 2 * len, p.add.width);
    const int64_t span = std::max(ceil_div(5 * len, p.mul.width), ceil_div(2 * len, p.add.width));
    sl.mupd_done = s + span + p.mul.latency + p.add.latency;
    is.done = sl.mupd_done;
    return;
  }
  need_hyper_and_assign("PARAM_UPDATE");
  if (m_decay != 1.0f) numerics::adamw_decay(m_theta.data(), len, m_decay);
  numerics::adam_params(m_theta.data(), m_bm.data(), m_bv.data(), len, m_const, m_scalars);
  m_sum = numerics::relative_change_sum(m_prev.data(), m_theta.data(), len, m_sum);
  const int64_t s = sub_start(std::max({is.at, sl.mupd_done, m_scalars_ready}),
                              {AdamSub::Sqrt, AdamSub::Div, AdamSub::Mul, AdamSub::Add});
  const bool decay = m_decay != 1.0f;
  occupy(AdamSub::Sqrt, s, len, p.sqrt.width);
  occupy(AdamSub::Div, s, 3 * len, p.div.width);
  occupy(AdamSub::Mul, s, (decay ? 2 : 1) * len, p.mul.width);
  occupy(AdamSub::Add, s, 5 * len, p.add.width);
  const int64_t span =
      std::max({ceil_div(len, p.sqrt.width), ceil_div(3 * len, p.div.width),
                ceil_div((decay ? 2 : 1) * len, p.mul.width), ceil_div(5 * len, p.add.width)});
  const int64_t chain =
      p.sqrt.latency + 3 * p.div.latency + (decay ? 2 : 1) * p.mul.latency + 4 * p.add.latency;
  sl.pupd_done = s + span + chain;
  m_step_done = std::max(m_step_done, sl.pupd_done);
  is.done = sl.pupd_done;
}

void AdamUnit::exec_control(const AdamInstr& in, Issue& is) {
  const int64_t basic = m_spec.basic_latency;
  switch (in.op) {
    case AdamOp::MEST: {
      need_hyper_and_assign("MOMENT_ESTIMATE");
      ++m_t;
      m_scalars = numerics::adam_step_scalars(m_hyper.lr, m_hyper.b1, m_hyper.b2, m_t);
      m_block = 0, m_sum = 0, m_converged = false;
      ++m_stats.steps;
      // basic sub-module: b1^t, b2^t, 1 - ., 1 - ., lr / bc1, sqrt(bc2): six chained fp64 ops
      const int64_t s = sub_start(std::max(is.at, m_hyper_ready), {AdamSub::Basic});
      occupy(AdamSub::Basic, s, 6, 1);
      m_scalars_ready = s + 6 * basic;
      is.done = m_scalars_ready;
      return;
    }
    case AdamOp::BNEXT:
      need_hyper_and_assign("bnext");
      is.done = is.at + 1;
      if (++m_block < m_blocks)
        is.taken = true, is.target = in.imm;
      else
        m_block = 0;
      return;
    case AdamOp::CCHECK: {
      need_hyper_and_assign("CONVERGENCE_CHECK");
      m_temp2 = numerics::convergence_mean(m_sum, m_n);
      m_converged = m_temp2 < static_cast<float>(m_hyper.ct);
      const int64_t s = sub_start(std::max(is.at, m_step_done), {AdamSub::Basic});
      occupy(AdamSub::Basic, s, 2, 1);
      is.done = s + 2 * basic;
      is.at = is.done;  // the controller waits for the outcome
      if (m_converged) is.taken = true, is.target = in.imm;
      return;
    }
    case AdamOp::ILOOP:
      need_hyper_and_assign("iloop");
      ++m_iterations;
      is.done = is.at + 1;
      if (m_hyper.max_iters == 0 || m_iterations < m_hyper.max_iters)
        is.taken = true, is.target = in.imm;
      return;
    case AdamOp::JMP:
      is.done = is.at + 1, is.taken = true, is.target = in.imm;
      return;
    default:
      return;
  }
}

void AdamUnit::execute(const AdamInstr& in, int64_t pc, Issue& is) {
  switch (in.op) {
    case AdamOp::IIO:
      if (pc != 0)
        throw UnitFault(fmt::format(
            "adam unit: INSTRUCTION_IO at instruction {} (only instruction 0 may fetch)", pc));
      fetch_program(m_program_addr, in.imm, is);
      is.at = is.done;  // nothing decodes before the cache is filled
      return;
    case AdamOp::HPIO:
      read_hyper(m_areg[in.a], is);
      return;
    case AdamOp::ASSIGN:
      assign(m_areg[in.a], in.imm, is);
      return;
    case AdamOp::SETA:
      m_areg[in.a] = in.imm, is.done = is.at + 1;
      return;
    case AdamOp::DIO:
    case AdamOp::XFERIN:
    case AdamOp::XFEROUT:
    case AdamOp::DBIO:
      exec_data(in, is);
      return;
    case AdamOp::MUPD:
    case AdamOp::PUPD:
      exec_compute(in, is);
      return;
    default:
      exec_control(in, is);
      return;
  }
}

int64_t AdamUnit::run(PagedMemory& hbm, int64_t addr, int64_t start, HbmEncoder* encoder) {
  m_hbm = &hbm;
  m_encoder = encoder;
  m_program_addr = addr;
  const int64_t begin = std::max(start, m_busy_until);
  ++m_stats.runs;
  m_path.clear_log();
  // Bootstrap: the DMA reads instruction 0, which must be INSTRUCTION_IO.
  check_hbm("instruction fetch", addr, 2);
  const uint64_t w0 = hbm.read(addr) | (static_cast<uint64_t>(hbm.read(addr + 1)) << 32);
  AdamInstr first;
  try {
    first = isa::adam_decode(w0, 0);
  } catch (const Error& e) {
    throw UnitFault(fmt::format("adam unit: {}", e.what()));
  }
  if (first.op != AdamOp::IIO)
    throw UnitFault("adam unit: instruction 0 must be INSTRUCTION_IO (iio)");
  const uint32_t first_words[2] = {hbm.read(addr), hbm.read(addr + 1)};
  const int64_t first_bytes = hbm_bytes({std::span<const uint32_t>(first_words)}, HbmKind::kOther);
  m_stats.instr_bytes += first_bytes;
  int64_t ctrl = dma(begin, first_bytes);
  m_icache.assign(1, first);
  int64_t pc = 0, executed = 0;
  for (;;) {
    if (pc < 0 || pc >= static_cast<int64_t>(m_icache.size()))
      throw UnitFault(
          fmt::format("adam unit: pc {} outside the {} instructions in the instruction cache", pc,
                      m_icache.size()));
    if (executed >= m_limit)
      throw UnitFault(fmt::format("adam unit: {} instructions executed without HALT", executed));
    const AdamInstr in = m_icache[static_cast<size_t>(pc)];
    ++executed;
    ++m_stats.instructions;
    ++m_stats.count[static_cast<int>(in.op)];
    m_path.forget_before(ctrl);
    Issue is;
    is.at = ctrl;
    is.done = ctrl + 1;
    if (in.op == AdamOp::HALT) {
      const int64_t end = std::max({ctrl + 1, m_last, m_step_done});
      m_stats.cycles[static_cast<int>(in.op)] += end - ctrl;
      m_stats.busy_cycles += end - begin;
      m_busy_until = end;
      return end;
    }
    execute(in, pc, is);
    m_stats.cycles[static_cast<int>(in.op)] += std::max<int64_t>(is.done - ctrl, 1);
    m_last = std::max(m_last, is.done);
    ctrl = is.at + (is.taken ? m_spec.branch_cycles : m_spec.decode_cycles);
    pc = is.taken ? is.target : pc + 1;
  }
}

}  // namespace tessera::core
