#include "runtime/host_run.h"

#include "common/error.h"

namespace tessera::runtime {

graph::HostTrainer host_trainer(const TrainModel& model, int batch, graph::Numerics numerics,
                                const graph::OptimizerConfig& optimizer, uint64_t seed,
                                bool use_blas) {
  return graph::HostTrainer([model](int n) { return build_train_model(model, n); },
                            init_train_params(model, build_train_model(model, batch), seed), batch,
                            numerics, optimizer, use_blas);
}

HostRunTrainer::HostRunTrainer(const TrainModel& model, const ChipTrainerOptions& options,
                               graph::Numerics numerics, bool use_blas)
    : m_options(options),
      m_host(
          host_trainer(model, options.batch, numerics, options.optimizer, options.seed, use_blas)) {
  if (model.build_eval) m_host.keep_state(model.initial_state, model.build_eval);
}

std::optional<double> HostRunTrainer::step(const Batch& b) {
  const double loss = step_on(m_host, b);
  m_step_loss.push_back(loss);
  return loss;
}

void HostRunTrainer::evaluate(const Batch& b, graph::EvalResult& acc) {
  evaluate_on(m_host, b, acc);
}

nlohmann::ordered_json HostRunTrainer::epoch_report(const EpochResult& e) {
  nlohmann::ordered_json j;
  put_epoch(j, e);
  j["host_seconds"] = e.wall_seconds;
  j["per_step"] = {{"loss", m_step_loss}};
  return j;
}

nlohmann::ordered_json HostRunTrainer::identity(const nlohmann::ordered_json& common) const {
  nlohmann::ordered_json id = common;
  id["run"] = "host";
  return id;
}

void HostRunTrainer::save(Checkpoint& c) const {
  c.progress["optimizer_steps"] = m_host.optimizer().steps();
  c.progress["step_loss"] = m_step_loss;
  c.params = m_host.params();
  c.state = m_host.optimizer().state();
  c.state.insert(c.state.end(), m_host.state().begin(), m_host.state().end());
}

void HostRunTrainer::restore(const Checkpoint& c, int64_t step, const std::string& path) {
  const nlohmann::ordered_json& p = c.progress;
  const size_t optimizer_tensors = m_host.optimizer().state().size();
  if (c.params.size() != m_host.params().size() ||
      c.state.size() != optimizer_tensors + m_host.state().size())
    throw Error(path, "does not fit this model: another number of tensors");
  for (size_t i = 0; i < c.params.size(); ++i)
    if (c.params[i].size() != m_host.params()[i].size())
      throw Error(path, "does not fit this model: another parameter size");
  m_host.params() = c.params;
  m_host.optimizer().state().assign(c.state.begin(),
                                    c.state.begin() + static_cast<long>(optimizer_tensors));
  m_host.state().assign(c.state.begin() + static_cast<long>(optimizer_tensors), c.state.end());
  m_host.optimizer().set_steps(progress_field<int64_t>(p, "optimizer_steps", path));
  m_step_loss.clear();
  if (p.contains("step_loss")) {
    if (!p["step_loss"].is_array() || static_cast<int64_t>(p["step_loss"].size()) != step)
      throw Error(path, "corrupt checkpoint progress (per-step loss)");
    for (const auto& l : p["step_loss"]) {
      if (!l.is_number()) throw Error(path, "corrupt checkpoint progress (per-step loss)");
      m_step_loss.push_back(l.get<double>());
    }
  }
}

HostRun::HostRun(const Dataset& train, const Dataset& test, const HostRunOptions& options)
    : RunLoop(train, test, options, [&options] {
        return std::make_unique<HostRunTrainer>(options.model, options.trainer, options.numerics,
                                                options.use_blas);
      }) {}

}  // namespace tessera::runtime
