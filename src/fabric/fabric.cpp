#include "fabric/fabric.h"

#include "fabric/engine.h"

namespace tessera::fabric {

Fabric::Fabric(const FabricSpec& spec, uint64_t seed)
    : m_engine(std::make_unique<Engine>(spec, seed)) {}
Fabric::~Fabric() = default;
Fabric::Fabric(Fabric&&) noexcept = default;
Fabric& Fabric::operator=(Fabric&&) noexcept = default;

void Fabric::post(Picos ready, Transfer t) {
  m_engine->post(ready, std::move(t));
}
std::vector<Arrival> Fabric::drain() {
  return m_engine->drain();
}
const FabricStats& Fabric::stats() const {
  return m_engine->stats();
}
Picos Fabric::now() const {
  return m_engine->now();
}
const Routing& Fabric::routing() const {
  return m_engine->routing();
}
void Fabric::set_workers(ThreadPool* pool) {
  m_engine->set_workers(pool);
}
void Fabric::set_ranks(RankGroup* ranks) {
  m_engine->set_ranks(ranks);
}
void Fabric::share_state() {
  m_engine->share_state();
}
const FabricHostTime& Fabric::host_time() const {
  return m_engine->host_time();
}
const FabricSpec& Fabric::spec() const {
  return m_engine->spec();
}
nlohmann::ordered_json Fabric::save_state() const {
  return m_engine->save_state();
}
void Fabric::restore_state(const nlohmann::ordered_json& state, const std::string& where) {
  m_engine->restore_state(state, where);
}

}  // namespace tessera::fabric
