// The `fortunes-topics` dataset: topic classification of the fortunes corpus (runtime/fortunes.h)
// as bags of hashed words, for the bag-of-words model.
//
// Definition:
//   * classes: the topic files (fortune_topic_files) with at least kTopicMinFortunes kept
//     fortunes (kept_fortunes), in name order; class k is the k-th of them;
//   * fortune i of a class's file (0-based, counting its kept fortunes) is a test sample when
//     i % 5 == 4, else a training sample; samples are in class order, then file order;
//   * tokens: after ASCII lower-casing, the maximal runs of [a-z0-9] (every other byte separates):
//     the unigrams in text order, then the bigrams "w1 w2" (one space) of consecutive unigrams in
//     text order;
//   * a token's id is the FNV-1a 64 hash of its bytes mod kTopicBuckets; a sample's bag is its
//     tokens' ids in token order, or {0} for a fortune with no token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/fortunes.h"

namespace tessera::runtime {

inline constexpr int64_t kTopicMinFortunes = 200;
inline constexpr int64_t kTopicBuckets = int64_t{1} << 20;

struct TopicSample {
  std::vector<int32_t> ids;  // the bag
  int32_t label = 0;
};

struct TopicCorpus {
  std::string source;                // the directory it was read from
  std::vector<std::string> classes;  // topic file names, in class order
  std::vector<TopicSample> train, test;
};

// The tokens of `text` (the rule above): unigrams, then bigrams.
std::vector<std::string> topic_tokens(std::string_view text);
// The bag of `text`: its tokens' ids, or {0}.
std::vector<int32_t> topic_bag(std::string_view text);

// The dataset of `dir`. Error naming the directory when no topic file has kTopicMinFortunes.
TopicCorpus load_fortune_topics(const std::string& dir = kFortunesDir);

}  // namespace tessera::runtime
