// Event counters and stall causes shared by the interpreters, the statistics and the energy model.
// Both lists are tables (stall_causes.def, event_counters.def): every list derived from them (the
// enum, the count, the names, subtraction, enumeration) follows a new row by construction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "isa/opcodes.h"

namespace tessera::core {

// Why a bundle could not issue in the cycle after its predecessor (stall_causes.def).
enum class StallCause : uint8_t {
#define X(e, name, what) e,
#include "core/stall_causes.def"
#undef X
};
inline constexpr int kNumStallCauses = 0
#define X(e, name, what) +1
#include "core/stall_causes.def"
#undef X
    ;
std::string_view to_string(StallCause c);

struct EventCounts {
  int64_t bundles = 0;
  std::array<int64_t, isa::kNumUnits> unit_ops{};
#define X(field, what) int64_t field = 0;
#include "core/event_counters.def"
#undef X
};

inline constexpr int kNumEventCounters = 0
#define X(field, what) +1
#include "core/event_counters.def"
#undef X
    ;
// Every member is an int64_t counter listed above: nothing can be added beside the table.
static_assert(sizeof(EventCounts) == sizeof(int64_t) * (1 + isa::kNumUnits + kNumEventCounters));

// Calls f(name, counter) for every counter of `e` in declaration order: "bundles",
// "unit_ops_<unit index>" for each unit, then the table's fields by their names (`name` is valid
// during the call only). `E` is EventCounts or const EventCounts.
template <class E, class F>
void for_each_counter(E& e, F&& f) {
  f(std::string_view("bundles"), e.bundles);
  for (size_t u = 0; u < e.unit_ops.size(); ++u)
    f(std::string_view("unit_ops_" + std::to_string(u)), e.unit_ops[u]);
#define X(field, what) f(std::string_view(#field), e.field);
#include "core/event_counters.def"
#undef X
}

// `after - before`, counter by counter (the events of a section of a run).
inline EventCounts operator-(const EventCounts& a, const EventCounts& b) {
  EventCounts d;
  d.bundles = a.bundles - b.bundles;
  for (size_t i = 0; i < d.unit_ops.size(); ++i) d.unit_ops[i] = a.unit_ops[i] - b.unit_ops[i];
#define X(field, what) d.field = a.field - b.field;
#include "core/event_counters.def"
#undef X
  return d;
}

}  // namespace tessera::core
