// Whole-file reads and checked writes whose errors name the path.
//
// Every reader of user files (configs, programs, models, graphs, systems, datasets, checkpoints)
// goes through read_file or check_input_file, so they refuse the same things with the same words:
//   "<path>: cannot open <what>"                 missing (ENOENT)
//   "<path>: cannot open <what>: <reason>"       any other open failure (permissions, ...)
//   "<path>: is a directory, not a file"
//   "<path>: cannot read <what>: <reason>"       a read error after opening
//   "<path>: is empty"                           an empty file, unless EmptyFile::kAllowed
// Files that are not regular (pipes, /dev/stdin) are read to their end like regular ones.
//
// Writers: OutputFile opens (creating or truncating) when constructed, so a long run can check
// its outputs before it starts; every write and the final close are checked, so a full disk or
// /dev/full is an error naming the path, never a silently short file.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

enum class EmptyFile { kRefused, kAllowed };

// The bytes of `path`; `what` names the kind of file in the errors above ("config file").
std::string read_file(const std::string& path, std::string_view what,
                      EmptyFile empty = EmptyFile::kRefused);

// Throws the errors above (except the read and empty ones) without reading: for readers that
// open the file through another library (zlib).
void check_input_file(const std::string& path, std::string_view what);

// Writes all of `bytes` to the open descriptor `fd`, retrying short writes; on failure throws
// "<path>: cannot write <what>: <reason>" (the descriptor stays open: the caller owns it).
void write_all(int fd, std::string_view bytes, const std::string& path, std::string_view what);

class OutputFile {
 public:
  // Opens `path` for writing (created with mode 0644, truncated). Errors:
  //   "<path>: cannot open <what> for writing: <reason>"
  OutputFile(std::string path, std::string_view what = "file");
  ~OutputFile();  // closes without checking (an unfinished file after an error elsewhere)
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // "<path>: cannot write <what>: <reason>" (ENOSPC on a full disk or /dev/full).
  void write(std::string_view bytes);
  // Closes the file: "<path>: cannot close <what>: <reason>".
  void close();
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::string m_what;
  int m_fd = -1;
};

// OutputFile(path, what), write(bytes), close().
void write_file(const std::string& path, std::string_view bytes, std::string_view what = "file");

}  // namespace tessera
