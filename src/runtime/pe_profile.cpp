#include "runtime/pe_profile.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "compiler/compiler.h"

namespace tessera::runtime {

namespace {

class Trials {
 public:
  Trials(const AccuracyOf& accuracy, AccWidthProfile& out) : m_accuracy(accuracy), m_out(out) {}

  // Runs (or recalls) `widths`; the baseline trial sets A0.
  bool ok(const std::string& stage, const std::vector<core::LayerAccWidth>& widths) {
    const std::string key = core::format_layer_acc_widths(widths);
    auto it = m_cache.find(key);
    if (it == m_cache.end()) it = m_cache.emplace(key, m_accuracy(widths)).first;
    const double acc = it->second;
    if (stage == "baseline") m_out.baseline_accuracy = acc;
    const bool good = acc >= m_out.baseline_accuracy - m_out.tolerance;
    m_out.trials.push_back(AccWidthTrial{stage, widths, acc, good});
    return good;
  }

 private:
  const AccuracyOf& m_accuracy;
  AccWidthProfile& m_out;
  std::map<std::string, double> m_cache;
};

std::vector<core::LayerAccWidth> all_at(const std::vector<std::string>& layers, int bits) {
  std::vector<core::LayerAccWidth> w;
  for (const std::string& l : layers) w.push_back(core::LayerAccWidth{l, bits});
  return w;
}

}  // namespace

AccWidthProfile profile_acc_width(const std::vector<std::string>& layers, int full_bits,
                                  int min_bits, double tolerance, const AccuracyOf& accuracy) {
  if (layers.empty()) throw Error("acc-width profile", "the model has no layer on the MXU");
  if (min_bits < 1 || min_bits > full_bits)
    throw Error("acc-width profile", "the minimum width " + std::to_string(min_bits) +
                                         " must be in [1, " + std::to_string(full_bits) + "]");
  AccWidthProfile p;
  p.full_bits = full_bits;
  p.min_bits = min_bits;
  p.tolerance = tolerance;
  Trials t(accuracy, p);
  const std::vector<core::LayerAccWidth> full = all_at(layers, full_bits);
  t.ok("baseline", full);
  for (size_t i = 0; i < layers.size(); ++i) {
    int lo = min_bits, hi = full_bits;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      std::vector<core::LayerAccWidth> w = full;
      w[i].bits = mid;
      if (t.ok("layer " + layers[i], w))
        hi = mid;
      else
        lo = mid + 1;
    }
    p.per_layer.push_back(core::LayerAccWidth{layers[i], hi});
  }
  p.chosen = p.per_layer;
  while (!t.ok("joint", p.chosen))
    for (core::LayerAccWidth& w : p.chosen) w.bits = std::min(full_bits, w.bits + 1);
  p.chosen_accuracy = p.trials.back().accuracy;
  return p;
}

std::vector<std::string> mxu_layers(const TrainingRunOptions& options) {
  compiler::CompileOptions c;
  c.batch = options.trainer.batch;
  c.training = true;
  c.optimizer = options.trainer.optimizer;
  c.adam_on = options.trainer.adam_on;
  const compiler::CompiledProgram p = compile_train_model(options.model, options.config.spec, c);
  std::vector<std::string> layers;
  for (const compiler::MxuRegion& r : p.mxu_regions)
    if (std::find(layers.begin(), layers.end(), r.role.layer) == layers.end())
      layers.push_back(r.role.layer);
  return layers;
}

AccuracyOf training_accuracy(const Dataset& train, const Dataset& test,
                             const TrainingRunOptions& options) {
  return [&train, &test, options](const std::vector<core::LayerAccWidth>& widths) {
    TrainingRunOptions o = options;
    o.config.spec.term.layer_acc_width = widths;
    o.checkpoint_dir.clear();
    o.resume = false;
    TrainingRun run(train, test, o);
    run.run();
    return run.report()["epochs"].back()["test_accuracy"].get<double>();
  };
}

nlohmann::ordered_json profile_json(const AccWidthProfile& p) {
  auto widths_json = [](const std::vector<core::LayerAccWidth>& ws) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const core::LayerAccWidth& w : ws) j[w.layer] = w.bits;
    return j;
  };
  nlohmann::ordered_json j;
  j["full_width"] = p.full_bits;
  j["min_width"] = p.min_bits;
  j["tolerance"] = p.tolerance;
  j["baseline_accuracy"] = p.baseline_accuracy;
  j["per_layer"] = widths_json(p.per_layer);
  j["chosen"] = widths_json(p.chosen);
  j["chosen_accuracy"] = p.chosen_accuracy;
  j["layer_acc_width"] = core::format_layer_acc_widths(p.chosen);
  j["trials"] = nlohmann::ordered_json::array();
  for (const AccWidthTrial& t : p.trials)
    j["trials"].push_back({{"stage", t.stage},
                           {"widths", widths_json(t.widths)},
                           {"accuracy", t.accuracy},
                           {"ok", t.ok}});
  return j;
}

nlohmann::ordered_json config_with_widths(const nlohmann::ordered_json& resolved,
                                          const std::vector<core::LayerAccWidth>& widths) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const auto& [key, value] : resolved.items()) {
    nlohmann::ordered_json* node = &doc;
    size_t start = 0;
    for (size_t dot = key.find('.'); dot != std::string::npos;
         start = dot + 1, dot = key.find('.', start))
      node = &(*node)[key.substr(start, dot - start)];
    (*node)[key.substr(start)] = key == "core.mxu.term.layer_acc_width"
                                     ? nlohmann::ordered_json(core::format_layer_acc_widths(widths))
                                     : value;
  }
  return doc;
}

}  // namespace tessera::runtime
