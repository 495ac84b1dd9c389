#include "core/state.h"

#include <algorithm>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::core {

PagedMemory::PagedMemory(int64_t words)
    : m_words(words), m_pages(static_cast<size_t>((words + kPageWords - 1) / kPageWords)) {}

uint32_t PagedMemory::read(int64_t addr) const {
  const auto& p = m_pages[static_cast<size_t>(addr / kPageWords)];
  return p ? p[addr % kPageWords] : 0u;
}

uint32_t* PagedMemory::page_for_write(int64_t page) {
  auto& p = m_pages[static_cast<size_t>(page)];
  if (!p) {
    p = static_cast<uint32_t*>(m_slabs.take());  // zeros
    ++m_allocated;
  }
  return p;
}

void PagedMemory::commit(int64_t addr, int64_t words) {
  if (words <= 0) return;
  for (int64_t p = addr / kPageWords; p <= (addr + words - 1) / kPageWords; ++p) page_for_write(p);
  m_slabs.commit();
}

void PagedMemory::write(int64_t addr, uint32_t value) {
  page_for_write(addr / kPageWords)[addr % kPageWords] = value;
}

void PagedMemory::read_block(int64_t addr, uint32_t* dst, int64_t n) const {
  while (n > 0) {
    const int64_t page = addr / kPageWords, off = addr % kPageWords;
    const int64_t len = std::min(n, kPageWords - off);
    const auto& p = m_pages[static_cast<size_t>(page)];
    if (p)
      std::memcpy(dst, p + off, static_cast<size_t>(len) * 4);
    else
      std::memset(dst, 0, static_cast<size_t>(len) * 4);
    addr += len, dst += len, n -= len;
  }
}

void PagedMemory::write_block(int64_t addr, const uint32_t* src, int64_t n) {
  while (n > 0) {
    const int64_t page = addr / kPageWords, off = addr % kPageWords;
    const int64_t len = std::min(n, kPageWords - off);
    std::memcpy(page_for_write(page) + off, src, static_cast<size_t>(len) * 4);
    addr += len, src += len, n -= len;
  }
}

int64_t PagedMemory::first_difference(const PagedMemory& o) const {
  if (m_words != o.m_words) return 0;
  for (size_t p = 0; p < m_pages.size(); ++p) {
    const uint32_t* a = m_pages[p];
    const uint32_t* b = o.m_pages[p];
    if (!a && !b) continue;
    for (int64_t i = 0; i < kPageWords; ++i) {
      const uint32_t va = a ? a[i] : 0u, vb = b ? b[i] : 0u;
      if (va != vb) return static_cast<int64_t>(p) * kPageWords + i;
    }
  }
  return -1;
}

bool PagedMemory::same_contents(const PagedMemory& o) const {
  return first_difference(o) < 0;
}

void RngState::generate(uint32_t* out, int64_t n) {
  numerics::philox_stream(seed, position, out, n);
  position += static_cast<uint64_t>(n);
}

ArchState::ArchState(const CoreSpec& spec)
    : smem(spec.smem_words),
      vmem(spec.vmem_rows() * spec.lanes),
      hbm(spec.hbm_bytes / 4),
      flags(static_cast<size_t>(spec.sync_flags), 0u),
      m_scalar_regs(spec.scalar_regs),
      m_vector_regs(spec.vector_regs),
      m_mask_regs(spec.mask_regs),
      m_vreg_words(spec.sublanes * spec.lanes),
      m_sregs(static_cast<size_t>(spec.scalar_regs + kShadowRegs), 0u),
      m_vregs(static_cast<size_t>(spec.vector_regs + kShadowRegs) * m_vreg_words, 0u),
      m_mregs(static_cast<size_t>(spec.mask_regs + kShadowRegs) * m_vreg_words, 0) {}

namespace {

template <typename T>
int64_t first_diff(const T* a, const T* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return i;
  return -1;
}

}  // namespace

std::string diff_architectural_state(const ArchState& a, const ArchState& b) {
  if (a.scalar_regs() != b.scalar_regs() || a.vector_regs() != b.vector_regs() ||
      a.mask_regs() != b.mask_regs() || a.vreg_words() != b.vreg_words() ||
      a.smem.size() != b.smem.size() || a.vmem.size() != b.vmem.size())
    return "different configurations";
  const int w = a.vreg_words();
  for (int i = 0; i < a.scalar_regs(); ++i)
    if (a.sreg(i) != b.sreg(i)) return fmt::format("s{}: {:#x} vs {:#x}", i, a.sreg(i), b.sreg(i));
  for (int i = 0; i < a.vector_regs(); ++i)
    if (int64_t k = first_diff(a.vreg(i), b.vreg(i), w); k >= 0)
      return fmt::format("v{} element {}: {:#x} vs {:#x}", i, k, a.vreg(i)[k], b.vreg(i)[k]);
  for (int i = 0; i < a.mask_regs(); ++i)
    if (int64_t k = first_diff(a.mreg(i), b.mreg(i), w); k >= 0)
      return fmt::format("m{} element {}: {} vs {}", i, k, a.mreg(i)[k], b.mreg(i)[k]);
  if (int64_t k = first_diff(a.smem.data(), b.smem.data(), a.smem.size()); k >= 0)
    return fmt::format("smem[{}]: {:#x} vs {:#x}", k, a.smem[k], b.smem[k]);
  if (int64_t k = first_diff(a.vmem.data(), b.vmem.data(), a.vmem.size()); k >= 0)
    return fmt::format("vmem word {}: {:#x} vs {:#x}", k, a.vmem[k], b.vmem[k]);
  if (int64_t k = a.hbm.first_difference(b.hbm); k >= 0)
    return fmt::format("hbm[{}]: {:#x} vs {:#x}", k, a.hbm.read(k), b.hbm.read(k));
  if (a.flags != b.flags) return "sync flags differ";
  if (a.rng.seed != b.rng.seed || a.rng.position != b.rng.position) return "rng state differs";
  if (a.pid != b.pid || a.nproc != b.nproc) return "pid/nproc differ";
  if (a.pc != b.pc) return fmt::format("pc: {} vs {}", a.pc, b.pc);
  if (a.halted != b.halted) return "halted differs";
  return "";
}

}  // namespace tessera::core
