// Runs the built `tessera` executable of this build tree from CLI tests (skip them when it has not
// been built: `cli_binary_exists()`).
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace tessera::testing {

inline std::string cli_binary() {
  return std::string(TESSERA_BINARY_DIR) + "/src/cli/tessera";
}
inline bool cli_binary_exists() {
  return std::filesystem::exists(cli_binary());
}

struct CliResult {
  int status = 0;  // as returned by pclose: exit code << 8
  std::string out;
};

// `tessera ARGS`: stdout only (keep_stderr false) or stderr only (true).
inline CliResult run_cli(const std::string& args, bool keep_stderr = false) {
  const std::string cmd =
      cli_binary() + " " + args + (keep_stderr ? " 2>&1 >/dev/null" : " 2>/dev/null");
  CliResult r;
  FILE* f = popen(cmd.c_str(), "r");
  char buf[4096];
  while (f != nullptr && std::fgets(buf, sizeof buf, f) != nullptr) r.out += buf;
  r.status = f != nullptr ? pclose(f) : -1;
  return r;
}

}  // namespace tessera::testing
