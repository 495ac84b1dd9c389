// Inserting the gradient all-reduce into a compiled training step (data_parallel.h).
#include <bit>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/allreduce_detail.h"
#include "compiler/collectives.h"
#include "compiler/data_parallel.h"
#include "isa/assembler.h"
#include "isa/opcodes.h"

namespace tessera::compiler {

namespace detail {

bool is_branch(isa::Opcode op) {
  return op != isa::Opcode::HALT && isa::op_info(op).latency == isa::LatencyClass::Branch;
}

void append_relocated(std::vector<isa::Bundle>& out, const std::vector<isa::Bundle>& code,
                      int64_t first, int64_t last, int64_t shift) {
  for (int64_t i = first; i < last; ++i) {
    isa::Bundle b = code[static_cast<size_t>(i)];
    for (isa::Instr& in : b.slot)
      if (is_branch(in.op)) in.imm = static_cast<int32_t>(in.imm + shift);
    out.push_back(b);
  }
}

void check_step(const CompiledProgram& step, const core::CoreSpec& spec,
                const AllReduceOptions& o) {
  if (o.processors < 1)
    throw Error("data-parallel", fmt::format("{} processors: need at least 1", o.processors));
  if (o.processor >= o.processors)
    throw Error("data-parallel",
                fmt::format("processor {} outside 0..{}", o.processor, o.processors - 1));
  if (o.shard < 1 || o.shard > o.global_batch)
    throw Error("data-parallel", fmt::format("shard of {} samples outside 1..{} (the global batch)",
                                             o.shard, o.global_batch));
  if (step.grads.words < 1)
    throw Error("data-parallel",
                "the step has no persistent gradient region (compile with persistent_grads)");
  const int64_t size = static_cast<int64_t>(step.program.code.size());
  if (step.optimizer_first_bundle < 0 || step.optimizer_first_bundle >= size)
    throw Error("data-parallel", "the compiled step has no optimizer section");
  for (int64_t i = 0; i < size; ++i)
    for (const isa::Instr& in : step.program.code[static_cast<size_t>(i)].slot)
      if (is_branch(in.op) &&
          (i < step.optimizer_first_bundle) != (in.imm < step.optimizer_first_bundle))
        throw Error("data-parallel", "a branch crosses the optimizer section of the compiled step");
  if (spec.scalar_regs < 29)
    throw Error("data-parallel", "the gradient all-reduce needs 29 scalar registers");
  if (spec.sync_flags <= kAllReduceFlag)
    throw Error("data-parallel",
                fmt::format("the gradient all-reduce needs sync flag {}", kAllReduceFlag));
}

std::string scale_asm(int64_t row, int64_t rows, float weight, const core::CoreSpec& spec,
                      const std::string& label) {
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  line(fmt::format("sli s23, 0x{:08x}", std::bit_cast<uint32_t>(weight)));
  line("vbcast v1, s23");
  line(fmt::format("sli s27, {}", row));
  line(fmt::format("sli s22, {}", rows / spec.sublanes));
  out += label + ":\n";
  line("vld v0, [s27+0]");
  line("vmul.f32 v0, v0, v1");
  line("vst v0, [s27+0]");
  line(fmt::format("saddi s27, s27, {}", spec.sublanes));
  line(fmt::format("loop s22, {}", label));
  return out;
}

void finish_image(DataParallelImage& img, const CompiledProgram& step, const core::CoreSpec& spec,
                  const AllReduceOptions& o) {
  if (static_cast<int64_t>(img.program.code.size()) > spec.imem_bundles)
    throw Error("data-parallel",
                fmt::format("the step with its all-reduce needs {} bundles, the instruction memory "
                            "holds {}",
                            img.program.code.size(), spec.imem_bundles));
  img.program.data = step.program.data;
  if (o.processor >= 0) img.program.index = static_cast<uint32_t>(o.processor);
}

}  // namespace detail

namespace {

// Words per chunk: all of vector memory in whole vector registers (sublanes x lanes words).
int64_t chunk_words(const core::CoreSpec& spec) {
  const int64_t group = int64_t{spec.sublanes} * spec.lanes;
  return spec.vmem_rows() / spec.sublanes * group;
}

}  // namespace

std::string gradient_allreduce_asm(int64_t grad_hbm, int64_t grad_words, float weight,
                                   const core::CoreSpec& spec, const AllReduceOptions& o) {
  const int64_t chunk = chunk_words(spec);
  const int64_t group = int64_t{spec.sublanes} * spec.lanes;
  std::string out;
  auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
  line("sli s24, 0");
  int c = 0;
  for (int64_t at = 0; at < grad_words; at += chunk, ++c) {
    const int64_t len = std::min(chunk, grad_words - at);
    line(fmt::format("sli s25, {}", grad_hbm + at));
    line(fmt::format("sli s26, {}", len));
    line(fmt::format("dma.hv s24, s25, s26, {}", kAllReduceFlag));
    line(fmt::format("wait {}, 1", kAllReduceFlag));
    out += detail::scale_asm(0, (len + group - 1) / group * spec.sublanes, weight, spec,
                             fmt::format("ar{}_scale", c));
    CollectiveSpec cs;
    cs.kind = CollectiveKind::kAllReduce;
    cs.processors = o.processors;
    cs.base = 0;
    cs.words = static_cast<uint32_t>(len);
    cs.rings = o.rings;
    cs.directions = o.directions;
    cs.algorithm = o.algorithm;
    cs.grid = o.grid;
    cs.label_prefix = fmt::format("ar{}_", c);
    cs.halt = false;
    out += o.processor < 0 ? collective_asm(cs) : collective_asm_for(cs, o.processor);
    line(fmt::format("dma.vh s25, s24, s26, {}", kAllReduceFlag));
    line(fmt::format("wait {}, 1", kAllReduceFlag));
  }
  return out;
}

DataParallelImage data_parallel_step(const CompiledProgram& step, const core::CoreSpec& spec,
                                     const AllReduceOptions& o) {
  if (o.bucket_words > 0) return bucketed_data_parallel_step(step, spec, o);
  detail::check_step(step, spec, o);
  const float weight = static_cast<float>(o.shard) / static_cast<float>(o.global_batch);
  const isa::Program reduce =
      isa::assemble(gradient_allreduce_asm(step.grads.hbm, step.grads.words, weight, spec, o),
                    "<gradient all-reduce>");
  const std::vector<isa::Bundle>& code = step.program.code;
  const int64_t first = step.optimizer_first_bundle;
  DataParallelImage img;
  std::vector<isa::Bundle>& out = img.program.code;
  detail::append_relocated(out, code, 0, first, 0);
  img.reduce_first = static_cast<int64_t>(out.size());
  detail::append_relocated(out, reduce.code, 0, static_cast<int64_t>(reduce.code.size()),
                           img.reduce_first);
  img.update_first = static_cast<int64_t>(out.size());
  detail::append_relocated(out, code, first, static_cast<int64_t>(code.size()),
                           img.update_first - first);
  detail::finish_image(img, step, spec, o);
  return img;
}

}  // namespace tessera::compiler
