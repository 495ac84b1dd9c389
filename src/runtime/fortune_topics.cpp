#include "runtime/fortune_topics.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/fnv1a.h"

namespace tessera::runtime {

namespace {

bool is_word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

std::vector<std::string> topic_tokens(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char raw : text) {
    const char c = ascii_lower(raw);
    if (is_word_byte(c)) {
      word.push_back(c);
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  std::vector<std::string> tokens = words;
  for (size_t i = 1; i < words.size(); ++i) tokens.push_back(words[i - 1] + " " + words[i]);
  return tokens;
}

std::vector<int32_t> topic_bag(std::string_view text) {
  std::vector<int32_t> ids;
  for (const std::string& t : topic_tokens(text))
    ids.push_back(static_cast<int32_t>(fnv1a64(t) % static_cast<uint64_t>(kTopicBuckets)));
  if (ids.empty()) ids.push_back(0);
  return ids;
}

TopicCorpus load_fortune_topics(const std::string& dir) {
  TopicCorpus c;
  c.source = dir;
  for (const std::string& name : fortune_topic_files(dir)) {
    const std::string bytes = read_file(dir + "/" + name, "fortune file", EmptyFile::kAllowed);
    const std::vector<std::string_view> kept = kept_fortunes(bytes);
    if (static_cast<int64_t>(kept.size()) < kTopicMinFortunes) continue;
    const auto label = static_cast<int32_t>(c.classes.size());
    c.classes.push_back(name);
    for (size_t i = 0; i < kept.size(); ++i)
      (i % 5 == 4 ? c.test : c.train).push_back({topic_bag(kept[i]), label});
  }
  if (c.classes.empty())
    throw Error(dir, fmt::format("no topic file holds {} fortunes (the fortunes-topics classes)",
                                 kTopicMinFortunes));
  return c;
}

}  // namespace tessera::runtime
