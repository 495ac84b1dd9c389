// Whole-file reads and checked writes: the refusals every reader shares, with their exact words.
#include "common/file_io.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera {
namespace {

using testing::error_of;
using testing::TempDir;
using testing::write_bytes;

TEST(ReadFile, ReturnsEveryByteOfTheFile) {
  TempDir dir;
  const std::string bytes("a\0b\nc", 5);
  write_bytes(dir.file("f"), bytes);
  EXPECT_EQ(read_file(dir.file("f"), "config file"), bytes);
}

TEST(ReadFile, MissingFileNamesThePathAndTheKindOfFile_bad) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { read_file(dir.file("nope.json"), "config file"); }),
            dir.file("nope.json") + ": cannot open config file");
  EXPECT_EQ(error_of([&] { check_input_file(dir.file("nope"), "IDX file"); }),
            dir.file("nope") + ": cannot open IDX file");
}

TEST(ReadFile, DirectoryIsRefused_bad) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { read_file(dir.str(), "model file"); }),
            dir.str() + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { check_input_file(dir.str(), "IDX file"); }),
            dir.str() + ": is a directory, not a file");
}

TEST(ReadFile, EmptyFileIsRefusedUnlessAllowed_bad) {
  TempDir dir;
  write_bytes(dir.file("empty"), "");
  EXPECT_EQ(error_of([&] { read_file(dir.file("empty"), "graph file"); }),
            dir.file("empty") + ": is empty");
  EXPECT_EQ(read_file(dir.file("empty"), "checkpoint", EmptyFile::kAllowed), "");
}

TEST(ReadFile, PathThroughAFileIsAnOpenErrorWithTheReason_bad) {
  TempDir dir;
  write_bytes(dir.file("f"), "x");
  EXPECT_EQ(error_of([&] { read_file(dir.file("f") + "/g", "system file"); }),
            dir.file("f") + "/g: cannot open system file: Not a directory");
}

TEST(WriteFile, WritesEveryByte) {
  TempDir dir;
  write_file(dir.file("out"), "hello\n");
  EXPECT_EQ(testing::read_bytes(dir.file("out")), "hello\n");
}

TEST(WriteFile, UnopenablePathIsAnErrorNamingIt_bad) {
  TempDir dir;
  EXPECT_EQ(
      error_of([&] { write_file(dir.file("no/such/dir.json"), "{}", "report"); }),
      dir.file("no/such/dir.json") + ": cannot open report for writing: No such file or directory");
  EXPECT_EQ(error_of([&] { OutputFile out(dir.str()); }),
            dir.str() + ": cannot open file for writing: Is a directory");
}

TEST(WriteFile, FullDiskIsAnErrorNamingThePath_bad) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  EXPECT_EQ(error_of([&] { write_file("/dev/full", "data", "graph file"); }),
            "/dev/full: cannot write graph file: No space left on device");
}

TEST(OutputFile, IsOpenedBeforeAnythingIsWrittenSoOutputsCanBeCheckedFirst) {
  TempDir dir;
  OutputFile out(dir.file("report.json"), "report");
  EXPECT_TRUE(std::filesystem::exists(dir.file("report.json")));
  out.write("{");
  out.write("}");
  out.close();
  EXPECT_EQ(testing::read_bytes(dir.file("report.json")), "{}");
}

}  // namespace
}  // namespace tessera
