// Architectural state of one tensor core: registers, memories, sync flags, special registers,
// the random number generator's state, PC. All sizes come from CoreSpec.
//
// Layout:
//   * scalar registers: 32-bit words; vector registers: sublanes x lanes 32-bit words, row-major
//     (element [s][l] at s * lanes + l); mask registers: one byte (0 or 1) per element.
//     Each register file has kShadowRegs extra entries after the architectural ones: the decoder
//     redirects a read of a register written earlier in the same bundle to a shadow copy taken at
//     the start of the bundle (bundle semantics: all operands are read at the start).
//   * scalar memory: smem_words 32-bit words; vector memory: vmem_rows() rows of `lanes` words;
//     both ZeroedArrays, so the host commits pages only when they are touched.
//   * HBM: word-addressed PagedMemory; pages of kPageWords words are allocated on first write,
//     reads of untouched memory return 0, so a 16 GiB HBM costs nothing until written.
//   * RNG: the Philox-4x32-10 stream of numerics/philox.h (the host references share it). `rng vD`
//     fills vD row-major with the next sublanes * lanes stream words; `rng.seed sA` sets
//     seed = sA and restarts the stream at word 0. The reset seed is 0.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/page_slabs.h"
#include "core/spec.h"
#include "core/zeroed_array.h"
#include "numerics/philox.h"

namespace tessera::core {

inline constexpr int kShadowRegs = 12;  // >= writes per bundle (one per slot) + 1

// A zero-initialised word array whose pages the host commits only when touched.
using ZeroedWords = ZeroedArray<uint32_t>;

// Word-addressed memory allocated lazily in pages; untouched words read as zero.
class PagedMemory {
 public:
  static constexpr int64_t kPageWords = int64_t{1} << 14;  // 64 KiB pages

  explicit PagedMemory(int64_t words);
  int64_t size() const { return m_words; }
  // Callers check ranges (addr + n <= size()).
  uint32_t read(int64_t addr) const;
  void write(int64_t addr, uint32_t value);
  void read_block(int64_t addr, uint32_t* dst, int64_t n) const;
  void write_block(int64_t addr, const uint32_t* src, int64_t n);
  // Page `page`'s words (kPageWords of them): null while the page was never written (all zeros).
  const uint32_t* page_data(int64_t page) const { return m_pages[static_cast<size_t>(page)]; }
  // Page `page`'s words for writing, allocated (zeros) on first use.
  uint32_t* page_for_write(int64_t page);
  int64_t pages_allocated() const { return m_allocated; }
  // Allocates the pages of [addr, addr + words) and makes them resident now, so that a run that
  // writes them pays no first touches of host memory (a timed run's buffers in place). Reads and
  // writes are unaffected: the pages hold zeros until written.
  void commit(int64_t addr, int64_t words);
  // Content equality: an untouched page equals a page of zeros.
  bool same_contents(const PagedMemory& other) const;
  // First differing word address, or -1.
  int64_t first_difference(const PagedMemory& other) const;

 private:
  int64_t m_words;
  PageSlabs m_slabs{kPageWords * 4};
  std::vector<uint32_t*> m_pages;  // null: never written
  int64_t m_allocated = 0;
};

struct RngState {
  uint32_t seed = 0;
  uint64_t position = 0;  // next stream word
  // Fills n words with stream words [position, position + n) and advances.
  void generate(uint32_t* out, int64_t n);
};

using numerics::philox4x32_10;

class ArchState {
 public:
  explicit ArchState(const CoreSpec& spec);

  int scalar_regs() const { return m_scalar_regs; }
  int vector_regs() const { return m_vector_regs; }
  int mask_regs() const { return m_mask_regs; }
  int vreg_words() const { return m_vreg_words; }  // sublanes * lanes

  uint32_t& sreg(int i) { return m_sregs[i]; }
  uint32_t sreg(int i) const { return m_sregs[i]; }
  uint32_t* vreg(int i) { return m_vregs.data() + static_cast<int64_t>(i) * m_vreg_words; }
  const uint32_t* vreg(int i) const {
    return m_vregs.data() + static_cast<int64_t>(i) * m_vreg_words;
  }
  uint8_t* mreg(int i) { return m_mregs.data() + static_cast<int64_t>(i) * m_vreg_words; }
  const uint8_t* mreg(int i) const {
    return m_mregs.data() + static_cast<int64_t>(i) * m_vreg_words;
  }

  ZeroedWords smem;
  ZeroedWords vmem;  // vmem_rows() * lanes words
  PagedMemory hbm;
  std::vector<uint32_t> flags;
  uint32_t pid = 0;
  uint32_t nproc = 1;
  RngState rng;
  int64_t pc = 0;
  bool halted = false;

 private:
  int m_scalar_regs, m_vector_regs, m_mask_regs, m_vreg_words;
  std::vector<uint32_t> m_sregs, m_vregs;
  std::vector<uint8_t> m_mregs;
};

// Compares the architectural state (registers without shadows, smem, vmem, HBM contents, flags,
// RNG, pid/nproc, pc, halted). Returns "" when identical, else a description of the first
// difference.
std::string diff_architectural_state(const ArchState& a, const ArchState& b);

}  // namespace tessera::core
