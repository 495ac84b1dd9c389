// Training curves: loss and accuracy per epoch, simulated and host seconds per epoch, and per
// training step (steps numbered across epochs): the step's loss and simulated cycles (a single-chip
// epoch's "per_step") or simulated seconds (a data-parallel epoch's), and the optimizer's cycles.
#include "htmlreport/sections.h"

namespace tessera::htmlreport {

Json training_section(const std::vector<Input>& in) {
  Lines loss("Loss per epoch", "epoch", "loss");
  Lines accuracy("Accuracy per epoch", "epoch", "accuracy");
  Lines seconds("Time per epoch", "epoch", "seconds");
  Lines optimizer("Optimizer cycles per step", "step", "cycles");
  Lines step_loss("Loss per step", "step", "loss");
  Lines step_cycles("Simulated cycles per step", "step", "cycles");
  Lines step_seconds("Simulated seconds per step", "step", "seconds");
  for (const Input& i : in) {
    if (i.kind != Kind::kTrain) continue;
    int64_t step = 0, first = 0;
    for (const Json& e : list_at(i.data, "epochs")) {
      const Json& per_step = field(e, "per_step");
      const Json& losses = list_at(per_step, "loss");
      const Json& cycles = list_at(per_step, "cycles");
      const Json& seconds_of_step = list_at(per_step, "seconds");
      const bool in_cycles = !cycles.empty();
      const Json& time = in_cycles ? cycles : seconds_of_step;
      for (size_t k = 0; k < losses.size() && k < time.size(); ++k) {
        const double x = static_cast<double>(first + static_cast<int64_t>(k) + 1);
        step_loss.add(i.label, x, number_of(losses[k]));
        (in_cycles ? step_cycles : step_seconds).add(i.label, x, number_of(time[k]));
      }
      first += static_cast<int64_t>(number_at(e, "steps"));
      const double epoch = number_at(e, "epoch");
      loss.add(i.label + " train", epoch, number_at(e, "loss"));
      loss.add(i.label + " test", epoch, number_at(e, "test_loss"));
      accuracy.add(i.label + " train", epoch, number_at(e, "train_accuracy"));
      accuracy.add(i.label + " test", epoch, number_at(e, "test_accuracy"));
      seconds.add(i.label + " simulated", epoch, number_at(e, "sim_seconds"));
      seconds.add(i.label + " host", epoch, number_at(e, "host_seconds"));
      for (const Json& c : list_at(field(field(e, "optimizer"), "per_step"), "cycles"))
        optimizer.add(i.label, static_cast<double>(++step), number_of(c));
    }
  }
  if (loss.empty()) return nullptr;
  Json charts = Json::array({loss.to_json(), accuracy.to_json(), seconds.to_json()});
  if (!step_loss.empty()) charts.push_back(step_loss.to_json());
  if (!step_cycles.empty()) charts.push_back(step_cycles.to_json());
  if (!step_seconds.empty()) charts.push_back(step_seconds.to_json());
  if (!optimizer.empty()) charts.push_back(optimizer.to_json());
  return make_section("training", "Training curves", std::move(charts));
}

}  // namespace tessera::htmlreport
