// The fortunes corpus reader: the splitting rule on small texts, and the Debian package's exact
// stream sizes and topic files.
#include "runtime/fortunes.h"

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using testing::error_of;

struct Streams {
  std::string train, validation;
  int64_t kept = 0;
};

Streams split(std::string_view text) {
  Streams s;
  s.kept = split_fortunes(text, s.train, s.validation);
  return s;
}

TEST(Fortunes, FortunesAreTheLinesBetweenPercentLines) {
  const Streams s = split("one\ntwo\n%\nthree\n%\n");
  EXPECT_EQ(s.kept, 2);
  EXPECT_EQ(s.train, "one\ntwo\n%\nthree\n%\n");
  EXPECT_EQ(s.validation, "");
}

TEST(Fortunes, TheLastFortuneRunsToTheFileEnd) {
  EXPECT_EQ(split("a\n%\nb\n").train, "a\n%\nb\n\n%\n");
  EXPECT_EQ(split("a\n%\nb").train, "a\n%\nb\n%\n");
}

TEST(Fortunes, EmptyAndWhitespaceFortunesAreDroppedAndNotCounted) {
  const Streams s = split("%\n \t\n%\n\n%\nx\n%\n%\n%y%\n % \n");
  EXPECT_EQ(s.kept, 2);  // "x" and "%y%\n % \n" (a line must hold only "%" to separate)
  EXPECT_EQ(s.train, "x\n%\n%y%\n % \n\n%\n");
}

TEST(Fortunes, EveryTenthKeptFortuneGoesToValidation) {
  std::string text;
  for (int i = 0; i < 25; ++i) text += (i == 3 ? std::string(" ") : std::to_string(i)) + "\n%\n";
  const Streams s = split(text);
  EXPECT_EQ(s.kept, 24);  // fortune 3 is whitespace: kept index 9 is the text "10"
  EXPECT_EQ(s.validation, "10\n%\n20\n%\n");
  EXPECT_EQ(s.train.find("10\n"), std::string::npos);
  EXPECT_EQ(s.train.substr(0, 10), "0\n%\n1\n%\n2\n");
}

TEST(Fortunes, MissingPackageNamesItAndTheInstallCommand) {
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/no-such-fortunes-dir";
  EXPECT_EQ(error_of([&] { load_fortunes(dir); }),
            dir +
                ": the fortunes corpus is not installed (install the Debian package fortunes: "
                "sudo apt-get install fortunes)");
  EXPECT_EQ(error_of([] { fortune_topic_files(TESSERA_SOURCE_DIR "/src/runtime/no-such-dir"); }),
            TESSERA_SOURCE_DIR
            "/src/runtime/no-such-dir: the fortunes corpus is not installed (install the Debian "
            "package fortunes: sudo apt-get install fortunes)");
}

TEST(Fortunes, TheDebianPackageGivesTheDefinedStreams) {
  if (!std::filesystem::exists(kFortunesDir)) GTEST_SKIP() << "fortunes is not installed";
  const TextCorpus c = load_fortunes();
  EXPECT_EQ(c.files.size(), 40u);
  EXPECT_EQ(c.files.front(), "art");
  EXPECT_EQ(c.files.back(), "zippy");
  for (std::string_view excluded : kFortunesMinFiles)
    EXPECT_EQ(std::count(c.files.begin(), c.files.end(), excluded), 0) << excluded;
  EXPECT_EQ(c.train.size(), 2'222'363u);
  EXPECT_EQ(c.validation.size(), 255'919u);
  EXPECT_EQ(c.train.substr(c.train.size() - 3), "\n%\n");
  EXPECT_EQ(c.validation.substr(c.validation.size() - 3), "\n%\n");
}

}  // namespace
}  // namespace tessera::runtime
