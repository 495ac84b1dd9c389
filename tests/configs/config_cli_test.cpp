// `tessera config --schema` lists exactly the declarations the readers make, and `--check`
// accepts the shipped configs and rejects a bad one with exit code 1 and the reader's message.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "common/config.h"
#include "core/spec.h"
#include "system/machine_spec.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout (and stderr when asked)
};

Result run_tessera(const std::string& args, bool with_stderr = false) {
  const std::string cmd =
      std::string("'") + TESSERA_EXE + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(ConfigCli, SchemaJsonIsTheReadersDeclarationsInOrder) {
  ConfigReader schema = ConfigReader::schema();
  system::read_machine_spec(schema);
  const Result r = run_tessera("config --schema --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), schema.declarations().size());
  for (size_t i = 0; i < j.size(); ++i) {
    const ParamDecl& d = schema.declarations()[i];
    EXPECT_EQ(j[i]["key"], d.key);
    EXPECT_EQ(j[i]["type"], d.type);
    EXPECT_EQ(j[i]["default"], d.default_value);
    EXPECT_EQ(j[i]["unit"], d.unit);
    EXPECT_EQ(j[i]["range"], d.range);
    EXPECT_FALSE(d.description.empty()) << d.key;
    EXPECT_EQ(j[i]["description"], d.description);
  }
}

TEST(ConfigCli, SchemaTextHasOneLinePerKeyAfterTheHeader) {
  ConfigReader schema = ConfigReader::schema();
  system::read_machine_spec(schema);
  const Result r = run_tessera("config --schema");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, schema_to_text(schema.declarations()));
}

TEST(ConfigCli, CheckAcceptsEveryShippedConfig) {
  for (const auto& e : fs::directory_iterator(fs::path(TESSERA_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    const Result r = run_tessera("config --json --check '" + e.path().string() + "'");
    ASSERT_EQ(r.exit_code, 0);
    const auto j = nlohmann::json::parse(r.out);
    const system::MachineSpec m = system::load_machine_spec(e.path().string());
    const core::CoreSpec& s = m.core;
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["core"]["name"], s.name);
    EXPECT_EQ(j["core"]["lanes"], s.lanes);
    EXPECT_EQ(j["core"]["mxu_rows"], s.mxu_rows);
    EXPECT_EQ(j["core"]["hbm_bytes"], s.hbm_bytes);
    EXPECT_EQ(j["core"]["mxu_count"], s.mxu_count);
    EXPECT_EQ(j["core"]["peak_macs_per_cycle"], int64_t{s.mxu_count} * s.mxu_rows * s.mxu_cols);
    EXPECT_EQ(j["system"]["chips"], m.system.chips);
    EXPECT_EQ(j["system"]["processors"], m.system.processors());
  }
}

TEST(ConfigCli, CheckRejectsAnUnknownKeyWithExitCode1_bad) {
  const fs::path path =
      fs::temp_directory_path() / ("tessera_bad_config_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"core": {"vector": {"lanse": 128}}})";
  const Result r = run_tessera("config --check '" + path.string() + "'", /*with_stderr=*/true);
  fs::remove(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "tessera: error: " + path.string() +
                ": key 'core.vector.lanse': unknown key (did you mean 'core.vector.lanes'?)\n");
}

TEST(ConfigCli, ConfigWithoutSchemaOrCheckIsAFlagError_bad) {
  EXPECT_EQ(run_tessera("config").exit_code, 2);
  EXPECT_EQ(run_tessera("config --schema --check x.json").exit_code, 2);
}

}  // namespace
}  // namespace tessera
