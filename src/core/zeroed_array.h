// ZeroedArray<T>: a fixed-size, zero-initialised array of a trivial type in its own ZeroedMapping,
// whose pages the host commits only when they are touched: a simulated memory or accumulator
// array of which a run touches a little costs that little. commit() makes it all resident at once
// (in huge pages where it spans 2 MiB or more), for a caller that expects to use most of it and
// would rather not pay a page fault per 4 KiB during the run. Move-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/zeroed_mapping.h"

namespace tessera::core {

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivial_v<T>, "a mapping's zero bytes must be T's zero");

 public:
  explicit ZeroedArray(int64_t size)
      : m_size(size), m_mapping(mapping_for(std::max<int64_t>(size, 1) * sizeof(T))) {}
  int64_t size() const { return m_size; }
  T* data() { return static_cast<T*>(m_mapping.data()); }
  const T* data() const { return static_cast<const T*>(m_mapping.data()); }
  T& operator[](int64_t i) { return data()[i]; }
  T operator[](int64_t i) const { return data()[i]; }
  void commit() { m_mapping.commit(); }

 private:
  // Arrays of a huge page or more start on a huge-page boundary, so that commit() can use them.
  static ZeroedMapping mapping_for(int64_t bytes) {
    return ZeroedMapping(
        bytes, bytes >= ZeroedMapping::kHugePageBytes ? ZeroedMapping::kHugePageBytes : 4096,
        false);
  }

  int64_t m_size;
  ZeroedMapping m_mapping;
};

}  // namespace tessera::core
