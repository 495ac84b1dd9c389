// Byte buffers for messages between ranks (common/rank_group.h): trivially copyable values and
// strings appended in native byte order (every rank runs the same binary on the same host type).
// The reader checks every length: a short or malformed buffer is an internal error (TESSERA_CHECK),
// never UB.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"

namespace tessera {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&v, sizeof v);
  }
  void put_string(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    append(s.data(), s.size());
  }
  void append(const void* data, size_t n) {
    if (n == 0) return;
    const size_t at = m_bytes.size();
    m_bytes.resize(at + n);
    std::memcpy(m_bytes.data() + at, data, n);
  }
  const std::vector<uint8_t>& bytes() const { return m_bytes; }
  std::vector<uint8_t>& bytes() { return m_bytes; }

 private:
  std::vector<uint8_t> m_bytes;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : m_bytes(bytes) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    read(&v, sizeof v);
    return v;
  }
  std::string get_string() {
    const uint64_t n = get<uint64_t>();
    TESSERA_CHECK(n <= m_bytes.size() - m_at, "communicator message: string past the end");
    std::string s(n, '\0');
    read(s.data(), n);
    return s;
  }
  void read(void* out, size_t n) {
    if (n == 0) return;
    TESSERA_CHECK(n <= m_bytes.size() - m_at, "communicator message: read past the end");
    std::memcpy(out, m_bytes.data() + m_at, n);
    m_at += n;
  }
  bool done() const { return m_at == m_bytes.size(); }

 private:
  const std::vector<uint8_t>& m_bytes;
  size_t m_at = 0;
};

}  // namespace tessera
