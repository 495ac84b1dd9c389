#include "runtime/fortunes.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"

namespace tessera::runtime {

namespace {

bool is_topic_file(const std::filesystem::directory_entry& e) {
  std::error_code ec;  // an entry that cannot be inspected is not a topic file
  if (e.is_symlink(ec) || !e.is_regular_file(ec)) return false;
  const std::string name = e.path().filename().string();
  if (name.ends_with(".dat")) return false;
  return std::find(kFortunesMinFiles.begin(), kFortunesMinFiles.end(), name) ==
         kFortunesMinFiles.end();
}

bool only_whitespace(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  });
}

}  // namespace

std::vector<std::string> fortune_topic_files(const std::string& dir) {
  const std::string missing =
      "the fortunes corpus is not installed (install the Debian package fortunes: "
      "sudo apt-get install fortunes)";
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) throw Error(dir, missing);
  std::vector<std::string> names;
  for (const std::filesystem::directory_entry& e : it)
    if (is_topic_file(e)) names.push_back(e.path().filename().string());
  if (names.empty()) throw Error(dir, missing);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string_view> kept_fortunes(std::string_view file) {
  std::vector<std::string_view> kept;
  auto flush = [&](std::string_view fortune) {
    if (!only_whitespace(fortune)) kept.push_back(fortune);
  };
  size_t start = 0;  // first byte of the current fortune
  size_t line = 0;   // first byte of the current line
  for (;;) {
    const size_t end = file.find('\n', line);
    const std::string_view text =
        file.substr(line, end == std::string_view::npos ? std::string_view::npos : end - line);
    if (text == "%") {
      // The fortune is the lines before this one, without the '\n' that ends the last of them.
      flush(line > start ? file.substr(start, line - 1 - start) : std::string_view{});
      start = end == std::string_view::npos ? file.size() : end + 1;
    }
    if (end == std::string_view::npos) break;
    line = end + 1;
  }
  flush(file.substr(start));
  return kept;
}

int64_t split_fortunes(std::string_view file, std::string& train, std::string& validation) {
  const std::vector<std::string_view> kept = kept_fortunes(file);
  for (size_t i = 0; i < kept.size(); ++i) {
    std::string& stream = i % 10 == 9 ? validation : train;
    stream.append(kept[i]);
    stream.append("\n%\n");
  }
  return static_cast<int64_t>(kept.size());
}

TextCorpus load_fortunes(const std::string& dir) {
  TextCorpus c;
  c.name = "fortunes";
  c.source = dir;
  c.files = fortune_topic_files(dir);
  for (const std::string& name : c.files)
    c.fortunes += split_fortunes(read_file(dir + "/" + name, "fortune file", EmptyFile::kAllowed),
                                 c.train, c.validation);
  return c;
}

Dataset fortunes_dataset(const TextCorpus& c, Split split, int context) {
  if (split == Split::kTrain)
    return text_dataset(c.name + "/train", c.source, c.train, context,
                        static_cast<int64_t>(c.train.size()) - context);
  const int64_t needed = int64_t{kValidationWindows} * context + 1;
  if (static_cast<int64_t>(c.validation.size()) < needed)
    throw Error(c.source, fmt::format("the validation stream of {} bytes does not hold {} windows "
                                      "of context {} ({} bytes needed)",
                                      c.validation.size(), kValidationWindows, context, needed));
  return text_dataset(c.name + "/validation", c.source, c.validation, context, kValidationWindows);
}

}  // namespace tessera::runtime
