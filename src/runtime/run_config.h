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
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/spec.h"

namespace tessera::runtime {

struct RunConfig {
  core::CoreSpec spec;
  nlohmann::ordered_json resolved;
  std::string hash;
};

// `path` empty: the built-in defaults. Errors as core::load_core_spec.
RunConfig load_run_config(const std::string& path);

// FNV-1a 64 of `bytes` as 16 hex digits.
std::string fnv1a64_hex(std::string_view bytes);

}  // namespace tessera::runtime
