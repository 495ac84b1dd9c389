// The fortunes-topics dataset: the token and hashing rules on small texts, the class and split
// rules on a small directory, and the Debian package's classes and sizes (figures computed
// independently from the definition in runtime/fortune_topics.h).
#include "runtime/fortune_topics.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/fnv1a.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using testing::error_of;

TEST(FortuneTopics, TokensAreLowerCasedWordRunsThenTheirBigrams) {
  EXPECT_EQ(topic_tokens("It's 2 A.M.: Don't PANIC!"),
            (std::vector<std::string>{"it", "s", "2", "a", "m", "don", "t", "panic", "it s", "s 2",
                                      "2 a", "a m", "m don", "don t", "t panic"}));
  EXPECT_EQ(topic_tokens("\xc3\xa9t\xc3\xa9"), (std::vector<std::string>{"t"}));  // UTF-8 separates
  EXPECT_TRUE(topic_tokens(" -- ").empty());
}

TEST(FortuneTopics, IdsAreFnv1a64ModTwoToTheTwentyAndAnEmptyBagIsZero) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(topic_bag("A"),
            (std::vector<int32_t>{static_cast<int32_t>(0xaf63dc4c8601ec8cull % (1ull << 20))}));
  const std::vector<int32_t> two = topic_bag("a b");
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(two[2], static_cast<int32_t>(fnv1a64("a b") % (1ull << 20)));
  EXPECT_EQ(topic_bag("?!"), (std::vector<int32_t>{0}));
}

// A topic file of `n` fortunes "w<i>".
void write_topic(const std::filesystem::path& dir, const std::string& name, int n) {
  std::ofstream f(dir / name, std::ios::binary);
  for (int i = 0; i < n; ++i) f << "w" << i << "\n%\n";
}

TEST(FortuneTopics, ClassesAreFilesWithEnoughFortunesAndEveryFifthIsATestSample) {
  const testing::TempDir t;
  const std::filesystem::path dir = t.str();
  write_topic(dir, "b", 200);
  write_topic(dir, "a", 199);  // too few: not a class
  write_topic(dir, "c", 203);
  const TopicCorpus c = load_fortune_topics(t.str());
  EXPECT_EQ(c.classes, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(c.train.size(), 160u + 163u);
  EXPECT_EQ(c.test.size(), 40u + 40u);
  EXPECT_EQ(c.test[0].ids, topic_bag("w4"));
  EXPECT_EQ(c.test[0].label, 0);
  EXPECT_EQ(c.train[160].ids, topic_bag("w0"));
  EXPECT_EQ(c.train[160].label, 1);
  EXPECT_EQ(c.test.back().ids, topic_bag("w199"));
  write_topic(dir, "b", 10);
  write_topic(dir, "c", 10);
  EXPECT_EQ(error_of([&] { load_fortune_topics(t.str()); }),
            t.str() + ": no topic file holds 200 fortunes (the fortunes-topics classes)");
}

TEST(FortuneTopics, TheDebianPackageGivesTheDefinedDataset) {
  if (!std::filesystem::exists(kFortunesDir)) GTEST_SKIP() << "fortunes is not installed";
  const TopicCorpus c = load_fortune_topics();
  EXPECT_EQ(c.classes, (std::vector<std::string>{
                           "art",       "computers",     "cookie",      "definitions", "disclaimer",
                           "drugs",     "education",     "knghtbrd",    "law",         "linux",
                           "men-women", "miscellaneous", "people",      "perl",        "platitudes",
                           "politics",  "science",       "songs-poems", "startrek",    "wisdom",
                           "work",      "zippy"}));
  EXPECT_EQ(c.train.size(), 10'218u);
  EXPECT_EQ(c.test.size(), 2'546u);
  int64_t ids = 0;
  size_t longest = 0;
  for (const auto* split : {&c.train, &c.test})
    for (const TopicSample& s : *split) longest = std::max(longest, s.ids.size());
  for (const TopicSample& s : c.train) ids += static_cast<int64_t>(s.ids.size());
  EXPECT_EQ(ids, 580'006);
  EXPECT_EQ(longest, 693u);
  EXPECT_EQ(std::vector<int32_t>(c.train[0].ids.begin(), c.train[0].ids.begin() + 8),
            (std::vector<int32_t>{104342, 1366, 716196, 103472, 120188, 406045, 293097, 677599}));
  EXPECT_EQ(c.test.back().label, 21);
}

}  // namespace
}  // namespace tessera::runtime
