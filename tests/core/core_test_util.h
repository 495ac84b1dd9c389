// Helpers for the core tests: small configurations, assembling, running both interpreters.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/config.h"
#include "core/core.h"
#include "core/functional.h"
#include "isa/assembler.h"

namespace tessera::core::test {

// Whether all `bytes` bytes from p are zero.
inline bool all_zero(const void* p, int64_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (int64_t i = 0; i < bytes; ++i)
    if (b[i] != 0) return false;
  return true;
}

// The small machine of most tests: 2 sublanes x 8 lanes, 8 x 8 MXU, small memories; `patch` is
// merged into it (JSON merge patch of the "core" object's contents).
inline CoreSpec small_spec(const nlohmann::json& patch = nlohmann::json::object()) {
  nlohmann::json core = {
      {"vector", {{"sublanes", 2}, {"lanes", 8}, {"vmem_bytes", 65536}}},
      {"mxu", {{"rows", 8}, {"cols", 8}, {"acc_blocks", 16}}},
      {"xu", {{"fifo", 4}}},
      {"rng", {{"words_per_cycle", 16}}},
      {"scalar", {{"smem_words", 1024}}},
      {"hbm", {{"bytes", 1 << 20}, {"bytes_per_cycle", 16}}},
      {"dma", {{"latency", 20}, {"queue", 4}}},
  };
  core.merge_patch(patch);
  nlohmann::json root = {{"core", core}};
  ConfigReader r = ConfigReader::from_string(root.dump(), "<small>");
  CoreSpec s = read_core_spec(r);
  r.finish();
  return s;
}

// The built-in defaults (tpu-v2-like sizes: 8 x 128 vector unit, 128 x 128 MXU).
inline CoreSpec default_spec(const nlohmann::json& patch = nlohmann::json::object()) {
  nlohmann::json root = {{"core", patch}};
  ConfigReader r = ConfigReader::from_string(root.dump(), "<default>");
  CoreSpec s = read_core_spec(r);
  r.finish();
  return s;
}

inline isa::Program assemble(std::string_view text, const CoreSpec& spec) {
  isa::AsmOptions o;
  o.scalar_regs = spec.scalar_regs;
  o.vector_regs = spec.vector_regs;
  o.mask_regs = spec.mask_regs;
  o.mxus = spec.mxu_count;
  return isa::assemble(text, "test.s", o);
}

// Runs `text` on the functional interpreter.
inline std::unique_ptr<FunctionalCore> run_functional(const CoreSpec& spec, std::string_view text) {
  auto f = std::make_unique<FunctionalCore>(spec, assemble(text, spec));
  f->run();
  return f;
}

// Runs `text` on the timed core.
inline std::unique_ptr<Core> run_timed(const CoreSpec& spec, std::string_view text,
                                       TimedOptions o = {}) {
  auto c = std::make_unique<Core>(spec, assemble(text, spec), o);
  c->run();
  return c;
}

// Runs both and checks that their architectural state is identical; returns the timed core.
inline std::unique_ptr<Core> run_both(const CoreSpec& spec, std::string_view text) {
  auto f = run_functional(spec, text);
  auto c = run_timed(spec, text);
  EXPECT_EQ(diff_architectural_state(f->state(), c->state()), "") << text;
  return c;
}

inline uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}
inline float fl(uint32_t x) {
  return std::bit_cast<float>(x);
}

// Words of vector memory rows [row, row + rows) (lanes words each).
inline std::vector<uint32_t> vmem_rows(const ArchState& s, const CoreSpec& spec, int64_t row,
                                       int rows) {
  const uint32_t* p = s.vmem.data() + row * spec.lanes;
  return std::vector<uint32_t>(p, p + static_cast<int64_t>(rows) * spec.lanes);
}

inline std::vector<uint32_t> vreg_words(const ArchState& s, int v) {
  return std::vector<uint32_t>(s.vreg(v), s.vreg(v) + s.vreg_words());
}

// ".word w0, w1, ..." for data directives.
inline std::string words_directive(const std::vector<uint32_t>& w) {
  std::string s = ".word ";
  for (size_t i = 0; i < w.size(); ++i) s += (i ? ", " : "") + std::to_string(w[i]);
  return s + "\n";
}

}  // namespace tessera::core::test
