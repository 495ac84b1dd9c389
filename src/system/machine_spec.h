// MachineSpec: what one config file describes — the core (`core.*`, core/spec.h) and the system
// of chips around it (`system.*`, system/system_spec.h). Every command that takes --config reads
// the file through here, so a file is validated the same way everywhere (unknown keys rejected in
// both sections) and a multi-chip config is also accepted where only the core is used.
#pragma once

#include <string>

#include "common/config.h"
#include "core/spec.h"
#include "system/system_spec.h"

namespace tessera::system {

struct MachineSpec {
  core::CoreSpec core;
  SystemSpec system;
};

// Reads and validates both sections (core first); unknown keys are the caller's to reject with
// reader.finish(). On ConfigReader::schema() this declares every key of a config file.
MachineSpec read_machine_spec(ConfigReader& reader);

// Reads `path` (empty: the built-in defaults) and rejects unknown keys.
MachineSpec load_machine_spec(const std::string& path);

}  // namespace tessera::system
