// The shipped configs in configs/ load, hold the figures they claim, and bad configs are rejected
// with exact messages.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "core/host_memory.h"
#include "core/spec.h"
#include "support/bad_paths.h"
#include "support/error_of.h"
#include "system/machine_spec.h"

namespace tessera::core {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(TESSERA_SOURCE_DIR) / "configs";

std::vector<fs::path> config_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kConfigs))
    if (e.is_regular_file() && (e.path().extension() == ".json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json parse_with_comments(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str(), nullptr, true, /*ignore_comments=*/true);
}

// Reads `text` as a whole core config, as load_core_spec does for a file.
CoreSpec read_text(std::string_view text) {
  ConfigReader r = ConfigReader::from_string(text, "test.json");
  CoreSpec s = read_core_spec(r);
  r.finish();
  return s;
}

std::string error_of(std::string_view text) {
  try {
    read_text(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Every file in configs/ is a machine config: its core.* and system.* sections both validate.
TEST(ConfigFiles, EveryShippedConfigLoads) {
  const auto files = config_files();
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    EXPECT_NO_THROW(system::load_machine_spec(f.string()));
  }
}

TEST(ConfigFiles, TpuV2LikeHasThePublishedFigures) {
  const CoreSpec s = load_core_spec((kConfigs / "tpu-v2-like.json").string());
  EXPECT_EQ(s.name, "tpu-v2-like");
  EXPECT_EQ(s.clock_hz, 700e6);
  EXPECT_EQ(s.mxu_rows, 128);
  EXPECT_EQ(s.mxu_cols, 128);
  EXPECT_TRUE(s.mxu_double_buffer);
  EXPECT_EQ(s.sublanes, 8);
  EXPECT_EQ(s.lanes, 128);
  EXPECT_EQ(s.vector_regs, 32);
  EXPECT_EQ(s.scalar_regs, 32);
  EXPECT_EQ(s.smem_words, 4096);
  EXPECT_EQ(s.vmem_bytes, 16ll << 20);
  EXPECT_EQ(s.hbm_bytes, 8ll << 30);  // half of the chip's 16 GiB
  // half of 600 GB/s at 700 MHz, to the 3 decimals written in the file
  EXPECT_NEAR(s.hbm_bytes_per_cycle, 300e9 / 700e6, 1e-3);
  EXPECT_EQ(s.energy.hbm_byte_pj, 31.2);
  EXPECT_EQ(s.energy.mac_pj, 2.0);
  EXPECT_EQ(s.latency_of(isa::LatencyClass::Eup), 3);
}

TEST(ConfigFiles, TpuV3LikeHasThePublishedFigures) {
  const system::MachineSpec m = system::load_machine_spec((kConfigs / "tpu-v3-like.json").string());
  const CoreSpec& s = m.core;
  EXPECT_EQ(s.name, "tpu-v3-like");
  EXPECT_EQ(s.clock_hz, 940e6);
  EXPECT_EQ(s.mxu_count, 2);
  EXPECT_EQ(s.mxu_rows, 128);
  EXPECT_EQ(s.mxu_cols, 128);
  EXPECT_EQ(s.sublanes, 8);
  EXPECT_EQ(s.lanes, 128);
  EXPECT_EQ(s.smem_words * 4, 16 << 10);
  EXPECT_EQ(s.vmem_bytes, 16ll << 20);
  EXPECT_EQ(s.hbm_bytes, 16ll << 30);  // half of the chip's 32 GiB
  // half of 900 GB/s at 940 MHz, to the 3 decimals written in the file
  EXPECT_NEAR(s.hbm_bytes_per_cycle, 450e9 / 940e6, 1e-3);
  EXPECT_EQ(m.system.cores_per_chip, 2);
  EXPECT_EQ(m.system.link_gbytes_per_s, 82);
}

TEST(ConfigFiles, SmallIsTheMiniatureMachine) {
  const CoreSpec s = load_core_spec((kConfigs / "small.json").string());
  EXPECT_EQ(s.name, "small");
  EXPECT_EQ(s.sublanes, 2);
  EXPECT_EQ(s.lanes, 8);
  EXPECT_EQ(s.mxu_rows, 8);
  EXPECT_EQ(s.mxu_cols, 8);
  EXPECT_EQ(s.vmem_bytes, 65536);
  EXPECT_EQ(s.vmem_rows(), 2048);
  EXPECT_EQ(s.hbm_bytes, 1 << 20);
  EXPECT_EQ(s.xu_fifo * s.sublanes, s.lanes);
}

// Every key of the core schema is written out in `file` (a config that documents the machine).
void expect_every_schema_key_set(const char* file) {
  ConfigReader schema = ConfigReader::schema();
  read_core_spec(schema);
  const auto doc = parse_with_comments(kConfigs / file);
  ASSERT_FALSE(schema.declarations().empty());
  for (const auto& d : schema.declarations()) {
    const nlohmann::json* node = &doc;
    std::string part;
    std::istringstream parts(d.key);
    bool found = true;
    while (std::getline(parts, part, '.')) {
      if (!node->is_object() || !node->contains(part)) {
        found = false;
        break;
      }
      node = &(*node)[part];
    }
    EXPECT_TRUE(found) << d.key << " is not set in " << file;
  }
}

TEST(ConfigFiles, TpuV2LikeSetsEverySchemaKeyExplicitly) {
  expect_every_schema_key_set("tpu-v2-like.json");
}

TEST(ConfigFiles, TpuV3LikeSetsEverySchemaKeyExplicitly) {
  expect_every_schema_key_set("tpu-v3-like.json");
}

TEST(ConfigFiles, MissingKeysTakeTheirDefaults) {
  const CoreSpec s = read_text(R"({"core": {"vector": {"regs": 16}}})");
  EXPECT_EQ(s.vector_regs, 16);
  EXPECT_EQ(s.lanes, CoreSpec{}.lanes);
  EXPECT_EQ(s.sublanes, CoreSpec{}.sublanes);
  EXPECT_EQ(s.clock_hz, CoreSpec{}.clock_hz);
}

TEST(ConfigFiles, UnknownKeyNamesTheClosestKnownKey_bad) {
  EXPECT_EQ(error_of(R"({"core": {"mxu": {"rowz": 64}}})"),
            "test.json: key 'core.mxu.rowz': unknown key (did you mean 'core.mxu.rows'?)");
}

TEST(ConfigFiles, UnknownKeyFarFromAnyKnownKey_bad) {
  EXPECT_EQ(error_of(R"({"core": {"quantum_flux": 1}})"),
            "test.json: key 'core.quantum_flux': unknown key (see `tessera config --schema` for "
            "every key)");
}

TEST(ConfigFiles, WrongType_bad) {
  EXPECT_EQ(error_of(R"({"core": {"vector": {"lanes": "128"}}})"),
            "test.json: key 'core.vector.lanes': expected an integer, got string \"128\"");
  EXPECT_EQ(error_of(R"({"core": {"mxu": {"double_buffer": 1}}})"),
            "test.json: key 'core.mxu.double_buffer': expected true or false, got 1");
  EXPECT_EQ(error_of(R"({"core": {"clock_hz": "fast"}})"),
            "test.json: key 'core.clock_hz': expected a number, got string \"fast\"");
  EXPECT_EQ(error_of(R"({"core": {"mxu": {"rows": 12.5}}})"),
            "test.json: key 'core.mxu.rows': expected an integer, got number 12.5");
}

TEST(ConfigFiles, OutOfRange_bad) {
  EXPECT_EQ(error_of(R"({"core": {"mxu": {"rows": 0}}})"),
            "test.json: key 'core.mxu.rows': value 0 is out of range [1, 1024] (PEs)");
  EXPECT_EQ(error_of(R"({"core": {"hbm": {"bytes_per_cycle": -1}}})"),
            "test.json: key 'core.hbm.bytes_per_cycle': value -1 is out of range [0.001, 1000000] "
            "(bytes/cycle)");
}

TEST(ConfigFiles, CrossKeyConstraint_bad) {
  EXPECT_EQ(
      error_of(
          R"({"core": {"vector": {"lanes": 8, "sublanes": 2}, "mxu": {"rows": 8, "cols": 16}}})"),
      "test.json: key 'core.mxu.cols': MXU columns cannot exceed the vector lanes");
  EXPECT_EQ(error_of(R"({"core": {"vector": {"lanes": 96}}})"),
            "test.json: key 'core.vector.lanes': lanes must be a power of two (reduction tree)");
}

TEST(ConfigFiles, SizesTheIsaCannotAddressAreNamedWithValueAndLimit_bad) {
  EXPECT_EQ(error_of(R"({"core": {"vector": {"vmem_bytes": 17179869184}}})"),
            "test.json: key 'core.vector.vmem_bytes': value 17179869184 is out of range [1024, "
            "8589934592] (bytes)");
  EXPECT_EQ(read_text(R"({"core": {"vector": {"vmem_bytes": 8589934592}}})").vmem_bytes,
            int64_t{8} << 30);
  EXPECT_EQ(error_of(R"({"core": {"hbm": {"bytes": 34359738368}}})"),
            "test.json: key 'core.hbm.bytes': 34359738368 bytes: HBM must be whole 32-bit words "
            "and addressable by a 32-bit word address (<= 16 GiB)");
}

TEST(ConfigFiles, HostMemoryCountsCommittedPartsPerCoreAndReservationsOnce) {
  CoreSpec s = read_text("{}");
  const HostMemory one = host_memory(s, 1);
  EXPECT_EQ(one.key, "core.vector.vmem_bytes");  // 16 MiB, then 1 MiB of MXU accumulators
  EXPECT_GT(one.bytes, s.vmem_bytes);
  EXPECT_LT(one.bytes, 2 * s.vmem_bytes);
  // Vector memory is reserved (committed as written): one core's counts, however many cores.
  CoreSpec more_vmem = s;
  more_vmem.vmem_bytes *= 2;
  EXPECT_EQ(host_memory(more_vmem, 8).bytes - host_memory(s, 8).bytes, s.vmem_bytes);
  // MXU accumulators are committed when a core is built: every core's counts.
  CoreSpec more_acc = s;
  more_acc.mxu_acc_blocks *= 2;
  const int64_t acc_bytes = int64_t{4} * s.mxu_acc_blocks * s.sublanes * s.mxu_cols;
  EXPECT_EQ(host_memory(more_acc, 8).bytes - host_memory(s, 8).bytes, 8 * acc_bytes);
}

TEST(ConfigFiles, CoresBeyondTheHostNameTheKeyOfTheLargestPart_bad) {
  CoreSpec s = read_text("{}");
  s.mxu_acc_blocks = 65536;  // 65536 blocks x 8 rows x 128 columns x 4 bytes = 256 MiB a core
  const HostMemory many = host_memory(s, 1 << 20);
  EXPECT_GT(many.bytes, host_memory_bytes());
  EXPECT_EQ(many.key, "core.mxu.acc_blocks");
  EXPECT_EQ(many.why.rfind("1048576 cores commit 2.62e+05 GiB when built (register files, MXU "
                           "accumulators) and reserve 0.0156 GiB each of vector and scalar "
                           "memory: 2.62e+05 GiB, 2.62e+05 GiB of it for this key; this host has ",
                           0),
            0u)
      << many.why;
  EXPECT_THROW(check_host_memory(s, 1 << 20), Error);
  EXPECT_NO_THROW(check_host_memory(read_text("{}"), 1));
}

TEST(ConfigFiles, JsonSyntaxErrorNamesLineAndColumn_bad) {
  const std::string text =
      "{\n  \"core\": {\n    \"name\": \"x\",\n    \"clock_hz\": 7e8,,\n  }\n}\n";
  const std::string err = error_of(text);  // line 4, column 21: the second comma
  EXPECT_EQ(err,
            "test.json:4:21: invalid JSON: syntax error while parsing object key - unexpected ','; "
            "expected string literal");
}

TEST(ConfigFiles, MissingFile_bad) {
  try {
    load_core_spec("/nonexistent/config.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/config.json: cannot open config file");
  }
}

TEST(ConfigFiles, NumberOverflowNamesTheFileAndPlace_bad) {
  EXPECT_EQ(error_of("{\n  \"core\": {\"clock_hz\": 1e400}\n}\n"),
            "test.json:2:24: invalid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(error_of(R"({"core": {"mxu": {"rows": 18446744073709551615}}})"),
            "test.json: key 'core.mxu.rows': value 18446744073709551615 is out of range [1, 1024] "
            "(PEs)");
}

TEST(ConfigFiles, DirectoryOrEmptyFileOrOverflowIsNamed_bad) {
  const testing::BadPaths bad = testing::bad_paths("config-files");
  auto load_error = [](const std::string& path) {
    return testing::error_of([&] { load_core_spec(path); });
  };
  EXPECT_EQ(load_error(bad.directory), bad.directory + ": is a directory, not a file");
  EXPECT_EQ(load_error(bad.empty), bad.empty + ": is empty");
  const std::string overflow = bad.directory + "/overflow.json";
  std::ofstream{overflow} << "{\"core\": {\"clock_hz\": 1e400}}";
  EXPECT_EQ(load_error(overflow),
            overflow + ":1:23: invalid JSON: number overflow parsing '1e400'");
}

}  // namespace
}  // namespace tessera::core
