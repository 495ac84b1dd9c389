#include "core/units/mxu_unit.h"

#include <cstring>

#include <fmt/format.h>

namespace tessera::core {

using isa::Opcode;

MxuUnit::MxuUnit(const UnitEnv& env) : CoreUnit(env), m_buf(static_cast<size_t>(words()), 0.0f) {
  m_mxus.reserve(static_cast<size_t>(env.spec.mxu_count));
  for (int i = 0; i < env.spec.mxu_count; ++i) m_mxus.emplace_back(env.spec);
}

MxuStats MxuUnit::total_stats() const {
  MxuStats total = m_mxus.front().stats();
  for (size_t i = 1; i < m_mxus.size(); ++i) total += m_mxus[i].stats();
  return total;
}

void MxuUnit::read_spec(ConfigReader& r, CoreSpec& s) {
  s.mxu_count = static_cast<int>(r.get_int("core.mxu.count", 1, {1, isa::kMaxMxus}, "MXUs",
                                           "matrix units per core (the ISA's mxu0, mxu1, ...)"));
  s.mxu_rows = static_cast<int>(
      r.get_int("core.mxu.rows", 128, {1, 1024}, "PEs", "systolic array rows R (reduction dim)"));
  s.mxu_cols = static_cast<int>(
      r.get_int("core.mxu.cols", 128, {1, 1024}, "PEs", "systolic array columns C (output dim)"));
  s.mxu_double_buffer = r.get_bool("core.mxu.double_buffer", true,
                                   "load the next weight tile while the current one multiplies");
  s.mxu_result_fifo = static_cast<int>(
      r.get_int("core.mxu.result_fifo", 33, {1, 1024}, "blocks", "result FIFO depth"));
  s.mxu_acc_blocks = static_cast<int>(r.get_int("core.mxu.acc_blocks", 256, {1, 1 << 16}, "blocks",
                                                "accumulator blocks (sublanes x cols fp32)"));
  s.mxu_pe = read_mxu_pe(r);
  s.term = read_term_mxu_spec(r, s.sublanes, s.mxu_cols);
}

int64_t MxuUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  const Mxu& m = mxu(op.c);
  switch (op.op) {
    case Opcode::MLW:
      cause = StallCause::MxuBusy;
      return m.mlw_ready(now);
    case Opcode::MFLIP:
      cause = StallCause::MxuWeights;
      return m.mflip_ready(now);
    case Opcode::MPOP:
      if (m.fifo_occupancy() == 0) return now;  // execute faults
      cause = StallCause::MxuResult;
      return m.mpop_ready(now);
    default:  // mmul*
      cause = StallCause::MxuBusy;
      return m.mmul_ready(now);
  }
}

OpTiming MxuUnit::execute(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  Mxu& m = mxu(op.c);
  // mlw / mmul copy their operand's words out of the vreg (Mxu reads `v` only through memcpy).
  const float* operand = reinterpret_cast<const float*>(s.vreg(op.a));
  m_events.vreg_elements += static_cast<int64_t>(words()) * (op.op == Opcode::MFLIP ? 0 : 1);
  switch (op.op) {
    case Opcode::MLW: {
      m.check_mlw();
      const int64_t start = m.mlw_ready(now);
      m.mlw(operand, start);
      return OpTiming{start, m_spec.sublanes, start};
    }
    case Opcode::MFLIP: {
      m.check_mflip();
      const int64_t start = m.mflip_ready(now);
      m.mflip(start);
      return OpTiming{start, 1, start};
    }
    case Opcode::MPOP: {
      m.check_mpop();
      const int64_t start = m.mpop_ready(now);
      m.mpop(m_buf.data(), start);
      std::memcpy(s.vreg(op.d), m_buf.data(), static_cast<size_t>(words()) * 4);
      return OpTiming{start, 1, start + m_spec.latency_of(isa::LatencyClass::Matrix)};
    }
    default: {  // mmul*
      const MmulMode mode = op.op == Opcode::MMUL      ? MmulMode::ToFifo
                            : op.op == Opcode::MMULST  ? MmulMode::Store
                            : op.op == Opcode::MMULACC ? MmulMode::Accumulate
                                                       : MmulMode::AccumulateOut;
      const int64_t block = mode == MmulMode::ToFifo ? 0 : static_cast<int32_t>(s.sreg(op.b));
      m.check_mmul(mode, block);
      const int64_t start = m.mmul_ready(now);
      m.mmul(operand, mode, block, start);
      return OpTiming{start, static_cast<int32_t>(m.last_mmul_occupancy()), start};
    }
  }
}

namespace {

// One MXU's counters, or the totals of `units` MXUs (peak: R * C MACs per cycle of one MXU).
void report_counters(report::StatGroup& mg, const MxuStats& mx, int units, double peak_one,
                     int64_t cycles_run) {
  const double cycles = static_cast<double>(cycles_run);
  const double peak = peak_one * units;
  mg.set_int("tiles_loaded", mx.tiles_loaded);
  mg.set_int("weight_rows", mx.weight_rows);
  mg.set_int("pushes", mx.pushes);
  mg.set_int("macs", mx.macs, "MACs");
  mg.set_int("busy_cycles", mx.busy_cycles, "cycles", "cycles the input port streamed rows");
  mg.set_int("span", mx.span(), "cycles", "first weight row in to last result out");
  mg.set("utilisation", cycles > 0 ? static_cast<double>(mx.macs) / (peak * cycles) : 0.0, "",
         units == 1 ? "MACs / (R * C * cycles)" : "MACs / (count * R * C * cycles)");
  mg.set(
      "span_utilisation",
      mx.span() > 0 ? static_cast<double>(mx.macs) / (peak * static_cast<double>(mx.span())) : 0.0,
      "", units == 1 ? "MACs / (R * C * span)" : "MACs / (count * R * C * span)");
}

}  // namespace

void MxuUnit::report(report::StatGroup& g, int64_t cycles_run) const {
  const double peak = static_cast<double>(m_spec.mxu_rows) * m_spec.mxu_cols;
  report::StatGroup& mg = g.group("mxu");
  report_counters(mg, total_stats(), count(), peak, cycles_run);
  if (count() == 1) return;
  mg.set_int("count", count(), "MXUs");
  for (int i = 0; i < count(); ++i)
    report_counters(mg.group(fmt::format("mxu{}", i)), mxu(i).stats(), 1, peak, cycles_run);
}

}  // namespace tessera::core
