// System::save_state / restore_state (system.h): the system between runs, for checkpoints.
#include <cstring>

#include <fmt/format.h>

#include "system/system.h"

namespace tessera::system {

namespace {

using Json = nlohmann::ordered_json;

// `a` as n integers; errors name `where` and `what`.
std::vector<int64_t> int64s(const Json& a, size_t n, const std::string& what,
                            const std::string& where) {
  if (!a.is_array() || a.size() != n)
    throw Error(where, fmt::format("corrupt system state: '{}' should have {} entries", what, n));
  std::vector<int64_t> out;
  for (const Json& v : a) {
    if (!v.is_number_integer())
      throw Error(where, fmt::format("corrupt system state: '{}' holds a non-integer", what));
    out.push_back(v.get<int64_t>());
  }
  return out;
}

const Json& field(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw Error(where, fmt::format("corrupt system state: no '{}'", key));
  return j[key];
}

}  // namespace

Json System::save_state() const {
  Bytes mine;  // this rank's cores' clocks, in processor order (ranks hold ascending blocks)
  for (int p = m_local.first; p < m_local.first + m_local.count; ++p) {
    const int64_t c = m_cores[static_cast<size_t>(p)]->cycles();
    const auto* b = reinterpret_cast<const uint8_t*>(&c);
    mine.insert(mine.end(), b, b + sizeof c);
  }
  Json clocks = Json::array();
  for (const Bytes& b : m_comm->allgather(mine))
    for (size_t i = 0; i + sizeof(int64_t) <= b.size(); i += sizeof(int64_t)) {
      int64_t c = 0;
      std::memcpy(&c, b.data() + i, sizeof c);
      clocks.push_back(c);
    }
  Json j;
  j["processors"] = processors();
  j["end_ps"] = m_end_ps;
  j["cycles"] = m_cycles;
  j["core_cycles"] = clocks;
  Json timing = Json::array(), fabrics = Json::array();
  for (const GroupTiming& t : m_timing)
    timing.push_back(
        Json::array({t.supersteps, t.barrier_ps, t.exchange_ps, t.transfers, t.bytes}));
  for (const auto& f : m_fabrics) fabrics.push_back(f->save_state());
  j["groups"] = timing;
  j["fabrics"] = fabrics;
  return j;
}

void System::restore_state(const Json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("processors") || j["processors"] != processors())
    throw Error(
        where, fmt::format("the system state is for {} processors, this system has {}",
                           j.is_object() && j.contains("processors") ? j["processors"].dump() : "?",
                           processors()));
  const std::vector<int64_t> clocks = int64s(
      field(j, "core_cycles", where), static_cast<size_t>(processors()), "core_cycles", where);
  const size_t groups = m_timing.size();
  const Json& group_timing = field(j, "groups", where);
  const Json& fabrics = field(j, "fabrics", where);
  if (!group_timing.is_array() || group_timing.size() != groups || !fabrics.is_array() ||
      fabrics.size() != groups)
    throw Error(
        where,
        fmt::format("corrupt system state: 'groups' and 'fabrics' should have {} entries", groups));
  std::vector<GroupTiming> timing(groups);
  for (size_t g = 0; g < groups; ++g) {
    const std::vector<int64_t> t = int64s(group_timing[g], 5, "groups", where);
    timing[g] = {t[0], t[1], t[2], static_cast<uint64_t>(t[3]), static_cast<uint64_t>(t[4])};
  }
  const std::vector<int64_t> end = int64s(
      Json::array({field(j, "end_ps", where), field(j, "cycles", where)}), 2, "end_ps", where);
  for (size_t g = 0; g < groups; ++g) m_fabrics[g]->restore_state(fabrics[g], where);
  for (int p = m_local.first; p < m_local.first + m_local.count; ++p) {
    try {
      m_cores[static_cast<size_t>(p)]->advance_clock(clocks[static_cast<size_t>(p)]);
    } catch (const Error& e) {
      throw Error(where, fmt::format("processor {}: {}", p, e.why()));
    }
  }
  m_timing = std::move(timing);
  m_end_ps = end[0];
  m_cycles = end[1];
}

}  // namespace tessera::system
