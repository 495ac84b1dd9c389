// The `fortunes` text corpus: byte-level training and validation streams read from the Debian
// package `fortunes` (installed in kFortunesDir).
//
// Definition (every run and every reference reads the same bytes):
//   * topic files: every regular file in the directory that is not `*.dat`, not a symlink and not
//     one of kFortunesMinFiles, sorted by name (40 files with Debian's fortunes 1:1.99.1). The
//     excluded three are the files of `fortunes-min`, a dependency of `fortunes` that installs
//     into the same directory; the stream sizes below are those of the other 40;
//   * a file is split into lines at '\n'; a fortune is the run of lines between two lines that
//     hold only "%" (or the file's start or end), joined with '\n' (no trailing newline);
//     fortunes that are empty or only whitespace are dropped;
//   * fortune i (0-based, counting the kept fortunes of its file) goes to validation when
//     i % 10 == 9, else to training; each fortune is followed by "\n%\n" in its stream; the
//     streams concatenate in file order;
//   * bytes as stored; the vocabulary is the 256 byte values.
// With the Debian package: training 2,222,363 bytes, validation 255,919 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/dataset.h"

namespace tessera::runtime {

inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
inline constexpr std::array<std::string_view, 3> kFortunesMinFiles = {"fortunes", "literature",
                                                                      "riddles"};
inline constexpr int kByteVocabulary = 256;

struct TextCorpus {
  std::string name;
  std::string source;              // the directory it was read from
  std::vector<std::string> files;  // topic file names, in stream order
  int64_t fortunes = 0;            // kept fortunes, both streams
  std::string train;
  std::string validation;
};

// The topic files of `dir`, sorted by name. A missing directory, or one without topic files, is an
// error naming the directory, the package `fortunes` and the command that installs it.
std::vector<std::string> fortune_topic_files(const std::string& dir);

// The kept fortunes of one topic file's bytes, in file order (the rule above), as views into it.
std::vector<std::string_view> kept_fortunes(std::string_view file);

// Appends the fortunes of one topic file's bytes to the two streams (the rule above); returns
// how many fortunes it kept.
int64_t split_fortunes(std::string_view file, std::string& train, std::string& validation);

// The whole corpus of `dir`.
TextCorpus load_fortunes(const std::string& dir = kFortunesDir);

// Validation windows of a gpt run: the first kValidationWindows non-overlapping windows of the
// validation stream.
inline constexpr int kValidationWindows = 256;

// One stream of `c` as a text dataset of `context`-byte windows (dataset.h): the training stream
// with every start position a window (count = bytes - context), or the validation stream with
// count = kValidationWindows (Error naming the corpus if it holds fewer).
Dataset fortunes_dataset(const TextCorpus& c, Split split, int context);

}  // namespace tessera::runtime
