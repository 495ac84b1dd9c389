#include "runtime/data_parallel_machine.h"

#include <fmt/format.h>

#include "common/error.h"
#include "system/collective_grid.h"

namespace tessera::runtime {

system::SystemSpec data_parallel_system(const system::SystemSpec& file, int chips,
                                        int cores_per_chip) {
  if (chips < 1) throw UsageError("train", fmt::format("--chips {}: need at least 1", chips));
  if (cores_per_chip < 0)
    throw UsageError("train", fmt::format("--cores-per-chip {}: need at least 1", cores_per_chip));
  system::SystemSpec s = file;
  if (file.chips > 1) {
    if (chips != file.chips)
      throw UsageError(
          "train",
          fmt::format("--chips {} does not match the config's system.chips {}", chips, file.chips));
    if (cores_per_chip != 0 && cores_per_chip != file.cores_per_chip)
      throw UsageError(
          "train",
          fmt::format("--cores-per-chip {} does not match the config's system.cores_per_chip {}",
                      cores_per_chip, file.cores_per_chip));
    return s;
  }
  s.chips = chips;
  s.chips_per_board = chips;
  s.boards = 1;
  s.topology = chips > 2 ? system::Topology::kRing : system::Topology::kLine;
  if (cores_per_chip != 0) s.cores_per_chip = cores_per_chip;
  system::validate_system_spec(s);
  return s;
}

void check_data_parallel_batch(const system::SystemSpec& system, int batch) {
  if (batch < system.processors())
    throw UsageError(
        "train",
        fmt::format("batch {} has fewer samples than the {} processors ({} chips x {} cores)",
                    batch, system.processors(), system.chips, system.cores_per_chip));
}

system::SystemSpec data_parallel_machine(const system::SystemSpec& file, int chips,
                                         int cores_per_chip, int batch) {
  const system::SystemSpec s = data_parallel_system(file, chips, cores_per_chip);
  check_data_parallel_batch(s, batch);
  return s;
}

compiler::CollectiveAlgorithm allreduce_for(const std::string& name,
                                            const system::SystemSpec& machine) {
  if (name == "ring") return compiler::CollectiveAlgorithm::kRing;
  if (name == "torus") return compiler::CollectiveAlgorithm::kTorus;
  if (!name.empty() && name != "auto")
    throw UsageError("--allreduce", fmt::format("'{}': expected auto, ring or torus", name));
  int dimensions = 0;
  for (int d : system::collective_grid(machine)) dimensions += d > 1 ? 1 : 0;
  return dimensions >= 2 ? compiler::CollectiveAlgorithm::kTorus
                         : compiler::CollectiveAlgorithm::kRing;
}

}  // namespace tessera::runtime
