// A toy unit added by the recipe of docs/contributing.md ("Adding a core unit"), and the properties
// of unit registration. The toy implements CoreUnit (core/unit.h) and is registered in a unit table
// in place of the random number generator, so it executes the `rng` and `rng.seed` ops through the
// same paths as every registered unit: Machine's dispatch, the timed core's readiness, stall and
// busy accounting, the event counters the energy model prices, and Core::stats.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "core/energy.h"
#include "core/fault.h"
#include "core/units.h"
#include "core_test_util.h"

namespace tessera::core {
namespace {

// The toy: a counter. `rng vD` writes the next S x L values of its counter into vD, occupying the
// unit `occupancy` cycles (vD ready when it is done); `rng.seed sA` sets the counter to sA and,
// as an asynchronous engine does, increments sync flag kDoneFlag `seed_latency` cycles later.
class ToyUnit final : public CoreUnit {
 public:
  static constexpr int kDoneFlag = 3;

  ToyUnit(const UnitEnv& env, int occupancy, int seed_latency)
      : CoreUnit(env), m_occupancy(occupancy), m_seed_latency(seed_latency) {}

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override {
    cause = StallCause::RngBusy;
    return std::max(now, m_free);
  }

  OpTiming execute(const DecodedOp& op, int64_t now) override {
    const int64_t start = std::max(now, m_free);
    if (op.op == isa::Opcode::RNGSEED) {
      m_counter = m_state.sreg(op.a);
      m_free = start + 1;
      if (m_timed)
        m_done.push_back(start + m_seed_latency);
      else
        ++m_state.flags[kDoneFlag];
      return OpTiming{start, 1, start};
    }
    uint32_t* d = m_state.vreg(op.d);
    for (int i = 0; i < words(); ++i) d[i] = m_counter++;
    ++m_fills;
    m_events.ext_elements += words();   // priced by core.energy.ext_op_pj
    m_events.vreg_elements += words();  // the vD write
    m_free = start + m_occupancy;
    return OpTiming{start, m_occupancy, start + m_occupancy};
  }

  void report(report::StatGroup& g, int64_t cycles) const override {
    g.group("toy").set_int("fills", m_fills, "vregs", "rng ops the toy executed");
  }

  bool signals_flags() const override { return true; }
  void retire(int64_t now) override {
    auto done = [&](int64_t at) { return at <= now; };
    m_state.flags[kDoneFlag] +=
        static_cast<uint32_t>(std::count_if(m_done.begin(), m_done.end(), done));
    m_done.erase(std::remove_if(m_done.begin(), m_done.end(), done), m_done.end());
  }
  int64_t flag_ready(int flag, int64_t value, int64_t want) const override {
    if (flag != kDoneFlag || value + static_cast<int64_t>(m_done.size()) < want) return -1;
    std::vector<int64_t> at = m_done;
    std::sort(at.begin(), at.end());
    return at[static_cast<size_t>(want - value - 1)];
  }

 private:
  int m_occupancy, m_seed_latency;
  uint32_t m_counter = 0;
  int64_t m_free = 0;
  int64_t m_fills = 0;
  std::vector<int64_t> m_done;  // completion cycles of seeds whose flag is not yet incremented
};

constexpr int kOccupancy = 5;
constexpr int kSeedLatency = 40;

// The core's unit table with the toy in the RNG's row: the recipe's registration line.
std::vector<UnitRegistration> toy_table() {
  std::vector<UnitRegistration> t(core_units().begin(), core_units().end());
  for (UnitRegistration& r : t)
    if (r.unit == isa::Unit::Rng)
      r = {isa::Unit::Rng, [](const UnitEnv& env) -> std::unique_ptr<CoreUnit> {
             return std::make_unique<ToyUnit>(env, kOccupancy, kSeedLatency);
           }};
  return t;
}

constexpr const char* kProgram = R"(
  sli s1, 100
  rng.seed s1
  rng v1
  rng v2
  wait 3, 1
  halt
)";

std::unique_ptr<Core> run_toy(const CoreSpec& spec, const std::vector<UnitRegistration>& table) {
  TimedOptions o;
  o.units = table;
  auto c = std::make_unique<Core>(spec, test::assemble(kProgram, spec), o);
  c->run();
  return c;
}

TEST(ToyUnit, ExecutesItsOpsWithTheSameValuesInBothInterpreters) {
  const CoreSpec spec = test::small_spec();
  const auto table = toy_table();
  const int n = spec.sublanes * spec.lanes;
  RunOptions fo;
  fo.units = table;
  FunctionalCore f(spec, test::assemble(kProgram, spec), fo);
  f.run();
  auto c = run_toy(spec, table);
  EXPECT_EQ(diff_architectural_state(f.state(), c->state()), "");
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(c->state().vreg(1)[i], static_cast<uint32_t>(100 + i)) << i;
    EXPECT_EQ(c->state().vreg(2)[i], static_cast<uint32_t>(100 + n + i)) << i;
  }
  EXPECT_EQ(f.state().flags[ToyUnit::kDoneFlag], 0u);  // the wait consumed the toy's increment
}

TEST(ToyUnit, BusyAndFlagWaitsAreChargedToTheUnitsStallCausesAndBusyCycles) {
  const CoreSpec spec = test::small_spec();
  auto c = run_toy(spec, toy_table());
  // sli at 0, rng.seed at 1 (the toy busy until 2), rng v1 at 2 (busy until 2 + occupancy), rng v2
  // waits for it; the wait waits for the seed's completion at 1 + kSeedLatency.
  EXPECT_EQ(c->stall_cycles(StallCause::RngBusy), kOccupancy - 1);
  const int64_t wait_issue = std::max<int64_t>(2 + kOccupancy + 1, 1 + kSeedLatency);
  EXPECT_EQ(c->stall_cycles(StallCause::SyncWait), wait_issue - (2 + kOccupancy + 1));
  EXPECT_EQ(c->unit_busy_cycles(isa::Unit::Rng), 1 + 2 * kOccupancy);
  const report::StatGroup st = c->stats();
  EXPECT_EQ(st.get("units.rng.ops"), 3);
  EXPECT_EQ(st.get("units.rng.busy_cycles"), 1 + 2 * kOccupancy);
}

TEST(ToyUnit, ReportsItsStatisticsGroupInTheCoresReport) {
  const CoreSpec spec = test::small_spec();
  const report::StatGroup st = run_toy(spec, toy_table())->stats();
  EXPECT_EQ(st.get("toy.fills"), 2);
  EXPECT_FALSE(test::run_timed(spec, "rng v1\n  halt\n")->stats().has("toy"));  // the real RNG
}

TEST(ToyUnit, ItsEventsArePricedByTheEnergyModel) {
  const CoreSpec spec = test::small_spec();
  auto c = run_toy(spec, toy_table());
  const int64_t n = spec.sublanes * spec.lanes;
  const EventCounts& ev = c->machine().events();
  EXPECT_EQ(ev.ext_elements, 2 * n);
  const auto parts =
      energy_parts(spec, ev, MxuEnergyCounts::of(c->machine().mxu().stats()), c->cycles());
  const auto ext = std::find_if(parts.begin(), parts.end(), [](const EnergyPart& p) {
    return std::string(p.name) == "ext_pj";
  });
  ASSERT_NE(ext, parts.end());
  EXPECT_EQ(ext->pj, spec.energy.ext_op_pj * static_cast<double>(2 * n));
  EXPECT_EQ(c->stats().get("energy.breakdown.ext_pj"), ext->pj);
}

TEST(UnitRegistry, EveryMatrixAndExtendedOpHasARegisteredUnit) {
  const CoreSpec spec = test::small_spec();
  const Machine m(spec, /*timed_dma=*/true);
  for (const isa::OpInfo& info : isa::kOpTable) {
    if (info.slot == isa::SlotClass::Matrix || info.slot == isa::SlotClass::Ext) {
      EXPECT_NE(m.unit(info.unit), nullptr) << info.mnemonic;
    }
  }
  ASSERT_EQ(m.units().size(), core_units().size());
  for (size_t i = 0; i < m.units().size(); ++i)
    EXPECT_EQ(m.units()[i].get(), m.unit(core_units()[i].unit)) << i;
}

TEST(UnitRegistry, EveryOpButTheSequencersHasARegisteredUnit) {
  const CoreSpec spec = test::small_spec();
  const Machine m(spec, /*timed_dma=*/true);
  for (const isa::OpInfo& info : isa::kOpTable) {
    const bool sequencer = info.unit == isa::Unit::None || info.unit == isa::Unit::Scalar ||
                           info.unit == isa::Unit::Sync || is_exchange_op(info.op);
    if (!sequencer) {
      EXPECT_NE(m.unit(info.unit), nullptr) << info.mnemonic;
    }
  }
}

TEST(UnitRegistry, EveryRegisteredUnitsConfigSectionIsInTheSchema) {
  ConfigReader r = ConfigReader::schema();
  read_core_spec(r);
  std::vector<std::string> keys;
  for (const ParamDecl& d : r.declarations()) keys.push_back(d.key);
  for (const char* key : {"core.mxu.rows", "core.mxu.pe", "core.xu.fifo", "core.rpu.fifo",
                          "core.eup.fifo", "core.rng.words_per_cycle"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
}

TEST(UnitRegistry, TwoUnitsForTheSameOps_bad) {
  const CoreSpec spec = test::small_spec();
  auto table = toy_table();
  table.push_back(core_units().back());  // the real RNG as well as the toy
  ASSERT_EQ(table.back().unit, isa::Unit::Rng);
  EXPECT_THROW(Machine(spec, /*timed_dma=*/true, table), tessera::Error);
}

TEST(UnitRegistry, AnOpWithoutItsUnitFaultsInBothInterpreters_bad) {
  const CoreSpec spec = test::small_spec();
  std::vector<UnitRegistration> table;
  for (const UnitRegistration& r : core_units())
    if (r.unit != isa::Unit::Rng) table.push_back(r);
  TimedOptions o;
  o.units = table;
  Core c(spec, test::assemble("rng v1\n  halt\n", spec), o);
  EXPECT_THROW(c.run(), SimFault);
  RunOptions fo;
  fo.units = table;
  FunctionalCore f(spec, test::assemble("rng v1\n  halt\n", spec), fo);
  EXPECT_THROW(f.run(), SimFault);
}

}  // namespace
}  // namespace tessera::core
