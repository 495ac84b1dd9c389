// Helpers for the sparse-core tests: a small machine with round timing figures, tables and bags
// written into HBM, and host references written independently of the unit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sparse_core.h"
#include "core/state.h"
#include "core_test_util.h"

namespace tessera::core::test {

// Request 16 B at 8 B/cycle (x = 2), latency 10, 4 outstanding: a stream of R requests takes
// 10 + (R - 1) * max(2, 12 / 4) + 2 = 9 + 3 R cycles.
// `sparse` is merged into the "sparse" section, `core` into the core's.
inline CoreSpec sparse_spec(const nlohmann::json& sparse = nlohmann::json::object(),
                            nlohmann::json core = nlohmann::json::object()) {
  nlohmann::json s = {{"hbm_request_bytes", 16},
                      {"hbm_bytes_per_cycle", 8},
                      {"hbm_latency", 10},
                      {"hbm_outstanding", 4},
                      {"vmem_latency", 5},
                      {"vmem_bytes_per_cycle", 8},
                      {"ids_per_cycle", 1},
                      {"simd_width", 4},
                      {"descriptor_cycles", 2},
                      {"queue", 8},
                      {"flags", 4}};
  s.merge_patch(sparse);
  core["sparse"] = s;
  return small_spec(core);
}

inline float table_value(int64_t row, int64_t col) {
  return std::ldexp(static_cast<float>((row * 37 + col * 11) % 29) - 14.0f, -3) + 0.1f;
}

// A rows x dim table at `base` filled with table_value; returns its index in `sc`.
inline int add_table(SparseCore& sc, ArchState& st, const char* name, int64_t base, int64_t rows,
                     int64_t dim) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < dim; ++c)
      st.hbm.write(base + r * dim + c, std::bit_cast<uint32_t>(table_value(r, c)));
  return sc.add_table({name, base, rows, dim}, st.hbm.size());
}

inline void write_words(ArchState& st, int64_t addr, const std::vector<uint32_t>& w) {
  st.hbm.write_block(addr, w.data(), static_cast<int64_t>(w.size()));
}

inline void write_floats(ArchState& st, int64_t addr, const std::vector<float>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    st.hbm.write(addr + static_cast<int64_t>(i), std::bit_cast<uint32_t>(v[i]));
}

inline std::vector<float> read_floats(const ArchState& st, int64_t addr, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::bit_cast<float>(st.hbm.read(addr + i));
  return v;
}

inline std::vector<uint32_t> read_words(const ArchState& st, int64_t addr, int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  st.hbm.read_block(addr, v.data(), n);
  return v;
}

// Bags as offsets (bags + 1 words) and ids, written at `offsets` and `ids`.
inline SparseBags write_bags(ArchState& st, int64_t ids, int64_t offsets,
                             const std::vector<std::vector<uint32_t>>& bags) {
  std::vector<uint32_t> off{0}, flat;
  for (const auto& b : bags) {
    flat.insert(flat.end(), b.begin(), b.end());
    off.push_back(static_cast<uint32_t>(flat.size()));
  }
  write_words(st, offsets, off);
  write_words(st, ids, flat);
  return {ids, offsets, static_cast<int64_t>(bags.size())};
}

}  // namespace tessera::core::test
