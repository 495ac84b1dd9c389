// What every fuzz target checks: a reader given any bytes ends normally or with a tessera::Error
// that is not a failed internal check; anything else (another exception, a failed check, a
// sanitizer report) traps, which libFuzzer reports as a crash.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "common/error.h"

namespace tessera::fuzz {

[[noreturn]] inline void crash() {
  __builtin_trap();
}

inline void check(bool ok) {
  if (!ok) crash();
}

inline bool is_internal(const Error& e) {
  return e.why().rfind("internal check", 0) == 0;
}

// Runs `f`; true when it returns, false when it throws a tessera::Error (an acceptable outcome
// unless it reports a failed internal check); traps on anything else.
template <typename F>
bool survives(F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    if (is_internal(e)) crash();
    return false;
  } catch (...) {
    crash();
  }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file of this process for readers that take a path; `name` tells several apart.
inline std::string scratch_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tessera-fuzz-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

inline void write_scratch(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  check(static_cast<bool>(out));
}

}  // namespace tessera::fuzz
