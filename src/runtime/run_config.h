// The core configuration of a training run: the frozen CoreSpec plus the fully resolved parameter
// set (every key read_core_spec declares, with the file's value or the default), which the
// training report records and whose hash identifies the configuration in checkpoints.
//
// Contract: `resolved` is a flat JSON object key -> value in declaration order (ints as integers,
// floats as numbers, bools, strings); `hash` is FNV-1a 64 over resolved.dump() as 16 lower-case
// hex digits, so two files that differ only in comments, formatting or in spelling out a default
// have the same hash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/spec.h"
#include "system/system_spec.h"

namespace tessera::runtime {

struct RunConfig {
  core::CoreSpec spec;
  // The config's system section, overrides applied (the base of a data-parallel machine:
  // runtime/data_parallel_machine.h).
  system::SystemSpec system;
  nlohmann::ordered_json resolved;
  std::string hash;
};

// `path` empty: the built-in defaults. Errors as core::load_core_spec.
RunConfig load_run_config(const std::string& path);
// The same with `overrides` (flat: dotted key -> value, e.g. {"core.mxu.pe": "term-serial"}) set
// over the file's values before reading, as if the file had them (so they are validated, resolved
// and hashed like the file's own values). Errors name "<path or built-in defaults> + overrides".
RunConfig load_run_config(const std::string& path, const nlohmann::json& overrides);

// FNV-1a 64 of `bytes` as 16 hex digits.
std::string fnv1a64_hex(std::string_view bytes);

}  // namespace tessera::runtime
