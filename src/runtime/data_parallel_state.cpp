// DataParallelTrainer's checkpoint support (data_parallel.h): replica_state, save_state, restore.
#include <bit>
#include <cstring>
#include <initializer_list>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/data_parallel.h"

namespace tessera::runtime {

namespace {

using Json = nlohmann::ordered_json;

// Calls f(name, field) for every integer field of DataParallelTotals (one list for save, load and
// difference).
template <class T, class F>
void each_total(T& t, F&& f) {
  f("steps", t.steps);
  f("samples", t.samples);
  f("supersteps", t.supersteps);
  f("wall_ps", t.wall_ps);
  f("compute_ps", t.compute_ps);
  f("exchange_ps", t.exchange_ps);
  f("exchange_bytes", t.exchange_bytes);
  f("wire_bytes", t.wire_bytes);
  f("packets", t.packets);
  f("retransmissions", t.retransmissions);
  f("host_bytes", t.host_bytes);
}

// `j[key]` as T; errors name `where`.
template <class T>
T field(const Json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
    throw Error(where, fmt::format("corrupt data-parallel state ('{}')", key));
  return j[key].get<T>();
}

// The words of every tensor of `groups`, in order.
std::vector<uint32_t> words_of(std::initializer_list<const Tensors*> groups) {
  std::vector<uint32_t> out;
  for (const Tensors* group : groups)
    for (const auto& t : *group) {
      const size_t at = out.size();
      out.resize(at + t.size());
      if (!t.empty()) std::memcpy(out.data() + at, t.data(), 4 * t.size());
    }
  return out;
}

// A replica's training state: its parameters, optimizer state and model state.
std::vector<uint32_t> replica_words(const core::Core& c, const compiler::CompiledProgram& prog) {
  const Tensors params = read_params(c, prog), optimizer = read_optimizer_state(c, prog),
                model = read_model_state(c, prog);
  return words_of({&params, &optimizer, &model});
}

}  // namespace

Json totals_to_json(const DataParallelTotals& t) {
  Json j;
  each_total(t, [&](const char* k, auto v) { j[k] = v; });
  j["link_busy_ps"] = t.link_busy_ps;
  j["host_link_seconds_bits"] = std::bit_cast<uint64_t>(t.host_link_seconds);
  return j;
}

DataParallelTotals totals_from_json(const Json& j, const std::string& where) {
  DataParallelTotals t;
  each_total(t, [&](const char* k, auto& v) {
    v = field<std::remove_reference_t<decltype(v)>>(j, k, where);
  });
  if (!j.contains("link_busy_ps") || !j["link_busy_ps"].is_array())
    throw Error(where, "corrupt data-parallel state ('link_busy_ps')");
  for (const Json& v : j["link_busy_ps"]) {
    if (!v.is_number_integer()) throw Error(where, "corrupt data-parallel state ('link_busy_ps')");
    t.link_busy_ps.push_back(v.get<int64_t>());
  }
  t.host_link_seconds = std::bit_cast<double>(field<uint64_t>(j, "host_link_seconds_bits", where));
  return t;
}

DataParallelTotals totals_since(const DataParallelTotals& now, const DataParallelTotals& start) {
  DataParallelTotals d = now;
  std::vector<uint64_t> before;  // start's integer fields (two's complement for the signed ones)
  each_total(start, [&](const char*, auto v) { before.push_back(static_cast<uint64_t>(v)); });
  size_t i = 0;
  each_total(d, [&](const char*, auto& v) {
    v -= static_cast<std::remove_reference_t<decltype(v)>>(before[i++]);
  });
  for (size_t l = 0; l < start.link_busy_ps.size() && l < d.link_busy_ps.size(); ++l)
    d.link_busy_ps[l] -= start.link_busy_ps[l];
  d.host_link_seconds -= start.host_link_seconds;
  return d;
}

const compiler::CompiledProgram& DataParallelTrainer::layout() const {
  const compiler::CompiledProgram& first = *m_programs.begin()->second;
  const auto same = [](const std::vector<compiler::HbmTensor>& a,
                       const std::vector<compiler::HbmTensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].hbm != b[i].hbm || a[i].words != b[i].words) return false;
    return true;
  };
  for (const auto& [shard, prog] : m_programs)
    if (!same(prog->params, first.params) || !same(prog->state, first.state) ||
        !same(prog->model_state, first.model_state) ||
        prog->adam_unit.used != first.adam_unit.used ||
        prog->adam_unit.theta != first.adam_unit.theta)
      throw Error("data-parallel",
                  fmt::format("the step for {} samples keeps its parameters, optimizer state "
                              "or model state elsewhere than the step for {}",
                              shard, m_programs.begin()->first));
  return first;
}

std::pair<Tensors, Tensors> DataParallelTrainer::replica_state() const {
  const compiler::CompiledProgram& prog = layout();
  const std::vector<int> bad =
      diverged([&](const core::Core& c) { return replica_words(c, prog); });
  if (!bad.empty())
    throw Error("data-parallel",
                fmt::format("after step {}: the parameters, optimizer state or model state of "
                            "processor {} differ from processor 0's; no checkpoint written",
                            m_steps, bad.front()));
  const system::Bytes b = m_system->from_processor(0, [&](const core::Core& c) {
    const std::vector<uint32_t> w = replica_words(c, prog);
    system::Bytes out(4 * w.size());
    if (!w.empty()) std::memcpy(out.data(), w.data(), out.size());
    return out;
  });
  std::pair<Tensors, Tensors> out;
  size_t at = 0;
  const auto take = [&](const std::vector<compiler::HbmTensor>& where, Tensors& into) {
    for (const compiler::HbmTensor& t : where) {
      std::vector<float> v(static_cast<size_t>(t.words));
      TESSERA_CHECK(at + 4 * v.size() <= b.size(), "replica words from processor 0");
      if (!v.empty()) std::memcpy(v.data(), b.data() + at, 4 * v.size());
      at += 4 * v.size();
      into.push_back(std::move(v));
    }
  };
  take(prog.params, out.first);
  take(prog.state, out.second);
  take(prog.model_state, out.second);
  TESSERA_CHECK(at == b.size(), "replica words from processor 0");
  return out;
}

Json DataParallelTrainer::save_state() const {
  Json j;
  j["steps"] = m_steps;
  j["totals"] = totals_to_json(m_totals);
  Json single = Json::array();
  for (const auto& [shard, seconds] : m_single_core)
    single.push_back({shard, std::bit_cast<uint64_t>(seconds)});
  j["single_core"] = single;
  j["system"] = m_system->save_state();
  return j;
}

void DataParallelTrainer::restore(const Tensors& params, const Tensors& state, const Json& saved,
                                  const std::string& where) {
  const compiler::CompiledProgram& prog = layout();
  const int64_t steps = field<int64_t>(saved, "steps", where);
  if (steps < 0) throw Error(where, "corrupt data-parallel state ('steps')");
  const auto [optimizer, model] = split_checkpoint_state(state, prog);
  try {
    for (int p = 0; p < processors(); ++p) {
      if (!m_system->is_local(p)) continue;
      core::Core& c = m_system->core(p);
      write_params(c, prog, params);
      write_optimizer_state(c, prog, optimizer);
      write_model_state(c, prog, model);
      if (prog.adam_unit.used) c.machine().adam().set_t(steps);
    }
  } catch (const Error& e) {
    throw Error(where, std::string("does not fit this model: ") + e.what());
  }
  const DataParallelTotals totals =
      totals_from_json(saved.contains("totals") ? saved["totals"] : Json(), where);
  std::map<int, double> single;
  if (!saved.contains("single_core") || !saved["single_core"].is_array())
    throw Error(where, "corrupt data-parallel state ('single_core')");
  for (const Json& e : saved["single_core"]) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_unsigned())
      throw Error(where, "corrupt data-parallel state ('single_core')");
    single[e[0].get<int>()] = std::bit_cast<double>(e[1].get<uint64_t>());
  }
  if (!saved.contains("system")) throw Error(where, "corrupt data-parallel state ('system')");
  m_system->restore_state(saved["system"], where);
  m_steps = steps;
  m_totals = totals;
  m_single_core = std::move(single);
}

}  // namespace tessera::runtime
