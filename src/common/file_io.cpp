#include "common/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "common/error.h"

namespace tessera {

namespace {

std::string reason(int errnum) {
  return std::strerror(errnum);
}

// Opens `path` for reading; throws the open and directory errors of file_io.h.
int open_input(const std::string& path, std::string_view what, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int errnum = errno;
    if (errnum == ENOENT) throw Error(path, fmt::format("cannot open {}", what));
    throw Error(path, fmt::format("cannot open {}: {}", what, reason(errnum)));
  }
  if (::fstat(fd, st) != 0) {
    const int errnum = errno;
    ::close(fd);
    throw Error(path, fmt::format("cannot open {}: {}", what, reason(errnum)));
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    throw Error(path, "is a directory, not a file");
  }
  return fd;
}

}  // namespace

std::string read_file(const std::string& path, std::string_view what, EmptyFile empty) {
  struct stat st {};
  const int fd = open_input(path, what, &st);
  std::string bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int errnum = errno;
      ::close(fd);
      throw Error(path, fmt::format("cannot read {}: {}", what, reason(errnum)));
    }
    if (got == 0) break;
    bytes.append(buf, static_cast<size_t>(got));
  }
  ::close(fd);
  if (bytes.empty() && empty == EmptyFile::kRefused) throw Error(path, "is empty");
  return bytes;
}

void check_input_file(const std::string& path, std::string_view what) {
  struct stat st {};
  ::close(open_input(path, what, &st));
}

void write_all(int fd, std::string_view bytes, const std::string& path, std::string_view what) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int errnum = w < 0 ? errno : ENOSPC;
      throw Error(path, fmt::format("cannot write {}: {}", what, reason(errnum)));
    }
    done += static_cast<size_t>(w);
  }
}

OutputFile::OutputFile(std::string path, std::string_view what)
    : m_path(std::move(path)), m_what(what) {
  m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0)
    throw Error(m_path, fmt::format("cannot open {} for writing: {}", m_what, reason(errno)));
}

OutputFile::~OutputFile() {
  if (m_fd >= 0) ::close(m_fd);
}

void OutputFile::write(std::string_view bytes) {
  TESSERA_CHECK(m_fd >= 0, "OutputFile::write after close");
  write_all(m_fd, bytes, m_path, m_what);
}

void OutputFile::close() {
  TESSERA_CHECK(m_fd >= 0, "OutputFile::close twice");
  const int rc = ::close(m_fd);
  m_fd = -1;
  if (rc != 0) throw Error(m_path, fmt::format("cannot close {}: {}", m_what, reason(errno)));
}

void write_file(const std::string& path, std::string_view bytes, std::string_view what) {
  OutputFile out(path, what);
  out.write(bytes);
  out.close();
}

}  // namespace tessera
