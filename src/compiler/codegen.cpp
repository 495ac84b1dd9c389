#include "compiler/codegen.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {
isa::Instr make(Opcode op, int d, int a, int b, int c, int32_t imm) {
  isa::Instr in;
  in.op = op;
  in.d = static_cast<uint8_t>(d);
  in.a = static_cast<uint8_t>(a);
  in.b = static_cast<uint8_t>(b);
  in.c = static_cast<uint8_t>(c);
  in.imm = imm;
  return in;
}

int32_t imm32(int64_t v, const char* what) {
  if (v < INT32_MIN || v > INT32_MAX)
    throw Error("compiler", std::string(what) + " does not fit a 32-bit immediate");
  return static_cast<int32_t>(v);
}

using Descriptors = std::map<std::array<uint32_t, 4>, uint32_t>;

// The lowest word of the DMA descriptors kept at the top of scalar memory once the descriptor
// region [0, kDescriptorWords) is full; smem_words when there are none.
int64_t overflow_low(const Descriptors& descriptors, int64_t smem_words) {
  int64_t low = smem_words;
  for (const auto& [words, at] : descriptors)
    if (at >= kDescriptorWords) low = std::min<int64_t>(low, at);
  return low;
}

// The four words of the descriptor at scalar-memory word `at`.
const uint32_t* descriptor_words(const std::vector<uint32_t>& region,
                                 const Descriptors& descriptors, int64_t at) {
  if (at < static_cast<int64_t>(region.size())) return &region[static_cast<size_t>(at)];
  for (const auto& [words, where] : descriptors)
    if (where == at) return words.data();
  TESSERA_CHECK(false, "no DMA descriptor at scalar-memory word " + std::to_string(at));
  return nullptr;
}
}  // namespace

HeldRegs::HeldRegs(int first, int last)
    : m_first(first), m_held(static_cast<size_t>(last - first + 1), false) {}

int HeldRegs::take() {
  for (size_t i = 0; i < m_held.size(); ++i)
    if (!m_held[i]) {
      m_held[i] = true;
      return m_first + static_cast<int>(i);
    }
  throw Error("compiler", "out of scalar registers (s" + std::to_string(m_first) + "..s" +
                              std::to_string(m_first + static_cast<int>(m_held.size()) - 1) +
                              " all held)");
}

int HeldRegs::take_top() {
  for (size_t i = m_held.size(); i-- > 0;)
    if (!m_held[i]) {
      m_held[i] = true;
      return m_first + static_cast<int>(i);
    }
  return take();  // throws: none free
}

void HeldRegs::give(int reg) {
  const auto i = static_cast<size_t>(reg - m_first);
  TESSERA_CHECK(reg >= m_first && i < m_held.size() && m_held[i], "a register given back twice");
  m_held[i] = false;
}

Codegen::Codegen(const core::CoreSpec& spec, bool zero_s0)
    : m_spec(spec), m_em(spec), m_smem_next(kDescriptorWords) {
  if (!zero_s0) return;
  if (spec.scalar_regs < 32 || spec.vector_regs < 24 || spec.mask_regs < 2)
    throw Error("compiler", "the core needs at least 32 scalar, 24 vector and 2 mask registers");
  sli(kRegZero, 0);
}

int Codegen::vreg() {
  const int v = m_next_v;
  m_next_v = m_next_v + 1 >= m_spec.vector_regs ? kConstRegs : m_next_v + 1;
  return v;
}

int Codegen::sreg() {
  const int s = m_next_s;
  m_next_s = m_next_s + 1 >= kRegStride ? 1 : m_next_s + 1;
  return s;
}

void Codegen::sli(int reg, int64_t value) {
  m_em.emit(make(Opcode::SLI, reg, 0, 0, 0, imm32(value, "a constant")));
}

void Codegen::dma(Opcode op, int64_t dst, int64_t src, int64_t count_or_desc) {
  const int d = sreg(), a = sreg(), b = sreg();
  sli(d, dst);
  sli(a, src);
  sli(b, count_or_desc);
  m_em.emit(make(op, d, a, b, 0, 0));
  const int64_t lanes = m_spec.lanes;
  if (op == Opcode::DMAHV) touch((dst + count_or_desc + lanes - 1) / lanes);
  if (op == Opcode::DMAHV2) {
    const uint32_t* desc = descriptor_words(m_smem, m_descriptors, count_or_desc);
    touch((dst + static_cast<int64_t>(desc[0] - 1) * desc[3] + desc[1] + lanes - 1) / lanes);
  }
  ++m_pending;
}

uint32_t Codegen::descriptor(int64_t count, int64_t chunk, int64_t src_stride, int64_t dst_stride) {
  const std::array<uint32_t, 4> d{static_cast<uint32_t>(count), static_cast<uint32_t>(chunk),
                                  static_cast<uint32_t>(src_stride),
                                  static_cast<uint32_t>(dst_stride)};
  auto it = m_descriptors.find(d);
  if (it != m_descriptors.end()) return it->second;
  const auto at = static_cast<uint32_t>(m_smem.size());
  if (static_cast<int64_t>(at) + 4 > std::min(kDescriptorWords, m_spec.smem_words)) {
    // The region is full: the descriptor goes to the top of scalar memory, below the earlier ones
    // kept there, as long as the kernels' data (growing up from kDescriptorWords) stay below.
    const int64_t top = overflow_low(m_descriptors, m_spec.smem_words) - 4;
    if (top < std::max(m_smem_next, kDescriptorWords))
      throw Error("compiler", "more than " + std::to_string(kDescriptorWords / 4) +
                                  " distinct DMA descriptors, and scalar memory of " +
                                  std::to_string(m_spec.smem_words) +
                                  " words has no room for more above the kernels' data");
    m_data.push_back(
        isa::DataSegment{isa::Space::Smem, static_cast<uint64_t>(top), {d.begin(), d.end()}});
    m_descriptors.emplace(d, static_cast<uint32_t>(top));
    return static_cast<uint32_t>(top);
  }
  m_smem.insert(m_smem.end(), d.begin(), d.end());
  m_descriptors.emplace(d, at);
  return at;
}

void Codegen::dma_regs(Opcode op, int d, int a, int b) {
  m_em.emit(make(op, d, a, b, 0, 0));
  ++m_pending;
}

void Codegen::loop_begin(int64_t trips) {
  if (m_loops.size() >= 2) throw Error("compiler", "loops nest at most two deep");
  if (trips < 1) throw Error("compiler", "a loop needs at least one trip");
  const int counter = m_loops.empty() ? kRegLoopOuter : kRegLoopInner;
  sli(counter, trips);
  m_em.barrier();
  m_loops.push_back(LoopFrame{m_em.size(), trips, m_pending, counter});
}

void Codegen::loop_end() {
  TESSERA_CHECK(!m_loops.empty(), "loop_end without loop_begin");
  const LoopFrame f = m_loops.back();
  m_loops.pop_back();
  m_em.close_loop(f.top, f.counter);
  m_pending = f.pending + (m_pending - f.pending) * f.trips;
}

void Codegen::wait_dmas() {
  if (m_pending == 0) return;
  TESSERA_CHECK(m_loops.empty(), "a loop body must not wait for DMAs");
  m_em.barrier();
  m_em.emit(make(Opcode::WAIT, 0, 0, 0, 0, imm32(m_pending, "a DMA count")));
  m_pending = 0;
  m_em.barrier();
}

void Codegen::vld(int v, int64_t row) {
  touch(row + m_spec.sublanes);
  m_em.emit(make(Opcode::VLD, v, kRegZero, 0, 0, imm32(row, "a vector-memory row")), row,
            row + m_spec.sublanes - 1);
}

void Codegen::vld_strided(int v, int64_t row, int stride_reg, int stride) {
  touch(row + static_cast<int64_t>(m_spec.sublanes - 1) * stride + 1);
  m_em.emit(make(Opcode::VLDS, v, kRegZero, stride_reg, 0, imm32(row, "a vector-memory row")), row,
            row + static_cast<int64_t>(m_spec.sublanes - 1) * stride);
}

void Codegen::vst(int v, int64_t row) {
  touch(row + m_spec.sublanes);
  m_em.emit(make(Opcode::VST, 0, v, kRegZero, 0, imm32(row, "a vector-memory row")), row,
            row + m_spec.sublanes - 1);
}

void Codegen::vst_strided(int v, int64_t row, int stride_reg, int stride) {
  const int64_t last = row + static_cast<int64_t>(m_spec.sublanes - 1) * stride;
  touch(last + 1);
  m_em.emit(make(Opcode::VSTS, 0, v, kRegZero, stride_reg, imm32(row, "a vector-memory row")), row,
            last);
}

void Codegen::op(Opcode o, int d, int a, int b, int c, int32_t imm) {
  m_em.emit(make(o, d, a, b, c, imm));
}

void Codegen::op_rows(Opcode o, int d, int a, int b, int c, int32_t imm, int64_t row_lo,
                      int64_t row_hi) {
  touch(row_hi + 1);
  m_em.emit(make(o, d, a, b, c, imm), row_lo, row_hi);
}

void Codegen::put(Opcode o, int d, int a, int b, int c, int32_t imm) {
  if (m_packed)
    m_em.emit(make(o, d, a, b, c, imm));
  else
    m_em.place(make(o, d, a, b, c, imm));
}

void Codegen::join(Opcode o, int d, int a, int b, int c, int32_t imm) {
  TESSERA_CHECK(!m_packed, "join() in packed code");
  m_em.place(make(o, d, a, b, c, imm), true);
}

void Codegen::put_branch(Opcode o, int a, int b, int label) {
  TESSERA_CHECK(!m_packed, "a branch in packed code");
  m_em.place_branch(make(o, 0, a, b, 0, 0), label);
}

void Codegen::append(const isa::Program& kernel, int64_t vmem_rows) {
  wait_dmas();
  std::vector<isa::Bundle> code = kernel.code;
  TESSERA_CHECK(!code.empty() && code.back().slot[0].op == Opcode::HALT,
                "appended kernel must end with halt");
  code.pop_back();
  if (vmem_rows >= 0) touch(vmem_rows);
  for (const isa::Bundle& b : code)
    for (const isa::Instr& in : b.slot)
      if (vmem_rows < 0 && (in.op == Opcode::VLD || in.op == Opcode::VST))
        touch(in.imm + m_spec.sublanes);
  m_em.append(code);
  for (const isa::DataSegment& d : kernel.data) {
    if (d.space == isa::Space::Smem)
      m_smem_next =
          std::max<int64_t>(m_smem_next, static_cast<int64_t>(d.address + d.words.size()));
    if (std::find(m_data.begin(), m_data.end(), d) == m_data.end()) m_data.push_back(d);
  }
  const int64_t low = overflow_low(m_descriptors, m_spec.smem_words);
  if (low < m_spec.smem_words && m_smem_next > low)
    throw Error("compiler", "scalar memory of " + std::to_string(m_spec.smem_words) +
                                " words cannot hold the kernels' data (up to word " +
                                std::to_string(m_smem_next) +
                                ") below the DMA descriptors from word " + std::to_string(low));
}

int64_t Codegen::reserve_smem(int64_t words) {
  const int64_t at = m_smem_next;
  if (at + words > overflow_low(m_descriptors, m_spec.smem_words))
    throw Error("compiler", "scalar memory of " + std::to_string(m_spec.smem_words) +
                                " words cannot hold " + std::to_string(words) + " more from word " +
                                std::to_string(at));
  m_smem_next = at + words;
  return at;
}

bool Codegen::fits_imem() {
  wait_dmas();
  return m_em.final_index(m_em.size()) + 1 <= m_spec.imem_bundles;  // + the final halt
}

isa::Program Codegen::finish() {
  wait_dmas();
  isa::Program p;
  p.code = m_em.finish();
  if (static_cast<int64_t>(p.code.size()) > m_spec.imem_bundles)
    throw Error("compiler", "the program needs " + std::to_string(p.code.size()) +
                                " bundles; instruction memory holds " +
                                std::to_string(m_spec.imem_bundles));
  if (!m_smem.empty()) p.data.push_back(isa::DataSegment{isa::Space::Smem, 0, m_smem});
  for (const isa::DataSegment& d : m_data) p.data.push_back(d);
  return p;
}

}  // namespace tessera::compiler
