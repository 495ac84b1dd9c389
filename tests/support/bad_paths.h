// Test support: the paths every file reader must refuse with a message naming them (a directory
// and an empty file), made fresh under the build tree for one test.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::testing {

struct BadPaths {
  std::string directory;  // an existing directory
  std::string empty;      // an existing empty file
  std::string missing;    // a path that does not exist
};

// `name` tells the tests apart: test-scratch/bad-paths-<name>/ under the build tree.
inline BadPaths bad_paths(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(TESSERA_BINARY_DIR) / "test-scratch" / ("bad-paths-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "a-directory");
  std::ofstream{dir / "empty"};
  return {(dir / "a-directory").string(), (dir / "empty").string(), (dir / "missing").string()};
}

}  // namespace tessera::testing
