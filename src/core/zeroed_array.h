// ZeroedArray<T>: a fixed-size, zero-initialised array of a trivial type whose pages the host
// commits only when they are written (calloc): a simulated memory or accumulator array of which a
// run touches a little costs that little. Move-only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace tessera::core {

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>, "calloc's zero bytes must be T's zero");

 public:
  explicit ZeroedArray(int64_t size) : m_size(size) {
    m_data.reset(static_cast<T*>(std::calloc(static_cast<size_t>(size > 0 ? size : 1), sizeof(T))));
    if (!m_data) throw std::bad_alloc();
  }
  int64_t size() const { return m_size; }
  T* data() { return m_data.get(); }
  const T* data() const { return m_data.get(); }
  T& operator[](int64_t i) { return m_data[i]; }
  T operator[](int64_t i) const { return m_data[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  int64_t m_size;
  std::unique_ptr<T[], Free> m_data;
};

}  // namespace tessera::core
