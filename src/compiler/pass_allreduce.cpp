// Inserting the gradient all-reduce into a compiled training step (data_parallel.h).
#include <bit>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/allreduce_detail.h"
#include "compiler/collective_algorithm.h"
#include "compiler/collectives.h"
#include "compiler/data_parallel.h"
#include "compiler/pipeline.h"
#include "isa/opcodes.h"

namespace tessera::compiler {

using isa::Opcode;

namespace {

// Words per chunk: all of vector memory in whole vector registers (sublanes x lanes words).
int64_t chunk_words(const core::CoreSpec& spec) {
  const int64_t group = int64_t{spec.sublanes} * spec.lanes;
  return spec.vmem_rows() / spec.sublanes * group;
}

}  // namespace

namespace detail {

bool is_branch(Opcode op) {
  return op != Opcode::HALT && isa::op_info(op).latency == isa::LatencyClass::Branch;
}

float shard_weight(const AllReduceOptions& o) {
  return static_cast<float>(o.shard) / static_cast<float>(o.global_batch);
}

void append_step_code(Codegen& cg, const std::vector<isa::Bundle>& code, int64_t first,
                      int64_t last) {
  std::vector<isa::Bundle> part(code.begin() + first, code.begin() + last);
  for (isa::Bundle& b : part)
    for (isa::Instr& in : b.slot)
      if (is_branch(in.op)) in.imm = static_cast<int32_t>(in.imm - first);
  cg.em().append(part);
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

DmaRegs::DmaRegs(HeldRegs& p) : pool(p) {
  const CollectiveRegs below(p);
  for (int& x : r) x = p.take();
}

DmaRegs::~DmaRegs() {
  for (int x : r) pool.give(x);
}

void emit_scale(Codegen& cg, HeldRegs& regs, int64_t row, int64_t rows, float weight) {
  const int at = regs.take_top(), w = regs.take_top(), count = regs.take_top();
  const core::CoreSpec& spec = cg.spec();
  cg.put(Opcode::SLI, w, 0, 0, 0, std::bit_cast<int32_t>(weight));
  cg.put(Opcode::VBCAST, 1, w);
  cg.put(Opcode::SLI, at, 0, 0, 0, static_cast<int32_t>(row));
  cg.put(Opcode::SLI, count, 0, 0, 0, static_cast<int32_t>(rows / spec.sublanes));
  const int top = cg.label();
  cg.bind(top);
  cg.put(Opcode::VLD, 0, at);
  cg.put(Opcode::VMULF, 0, 0, 1);
  cg.put(Opcode::VST, 0, 0, at);
  cg.put(Opcode::SADDI, at, at, 0, 0, spec.sublanes);
  cg.put_branch(Opcode::LOOP, count, 0, top);
  for (int r : {w, at, count}) regs.give(r);
}

void finish_image(DataParallelImage& img, Codegen& cg, const CompiledProgram& step,
                  const core::CoreSpec& spec, const AllReduceOptions& o) {
  img.program.code = cg.em().finish();
  img.reduce_first = cg.em().final_index(img.reduce_first);
  img.update_first = cg.em().final_index(img.update_first);
  if (static_cast<int64_t>(img.program.code.size()) > spec.imem_bundles)
    throw Error("data-parallel",
                fmt::format("the step with its all-reduce needs {} bundles, the instruction memory "
                            "holds {}",
                            img.program.code.size(), spec.imem_bundles));
  img.program.data = step.program.data;
  if (o.processor >= 0) img.program.index = static_cast<uint32_t>(o.processor);
}

void emit_region_allreduce(Codegen& cg, int64_t region_hbm, int64_t region_words, float weight,
                           const AllReduceOptions& o) {
  const core::CoreSpec& spec = cg.spec();
  const int64_t chunk = chunk_words(spec);
  const int64_t group = int64_t{spec.sublanes} * spec.lanes;
  HeldRegs regs(1, kRegStride - 1);
  const detail::DmaRegs dma(regs);
  const int vmem = dma.r[0], hbm = dma.r[1], words = dma.r[2];
  cg.put(Opcode::SLI, vmem, 0, 0, 0, 0);
  for (int64_t at = 0; at < region_words; at += chunk) {
    const int64_t len = std::min(chunk, region_words - at);
    cg.put(Opcode::SLI, hbm, 0, 0, 0, static_cast<int32_t>(region_hbm + at));
    cg.put(Opcode::SLI, words, 0, 0, 0, static_cast<int32_t>(len));
    cg.put(Opcode::DMAHV, vmem, hbm, words, kAllReduceFlag);
    cg.put(Opcode::WAIT, 0, kAllReduceFlag, 0, 0, 1);
    detail::emit_scale(cg, regs, 0, (len + group - 1) / group * spec.sublanes, weight);
    CollectiveSpec cs;
    cs.kind = CollectiveKind::kAllReduce;
    cs.processors = o.processors;
    cs.base = 0;
    cs.words = static_cast<uint32_t>(len);
    cs.rings = o.rings;
    cs.directions = o.directions;
    cs.algorithm = o.algorithm;
    cs.grid = o.grid;
    emit_collective(cg, regs, cs, o.processor);
    cg.put(Opcode::DMAVH, hbm, vmem, words, kAllReduceFlag);
    cg.put(Opcode::WAIT, 0, kAllReduceFlag, 0, 0, 1);
  }
}

void emit_model_state_allreduce(Codegen& cg, const CompiledProgram& step, float weight,
                                const AllReduceOptions& o) {
  if (step.model_state.empty()) return;
  const int64_t first = step.model_state.front().hbm;
  int64_t end = first;
  for (const HbmTensor& t : step.model_state) {
    TESSERA_CHECK(t.hbm == end, "the model state is one contiguous HBM region");
    end += t.words;
  }
  emit_region_allreduce(cg, first, end - first, weight, o);
}

}  // namespace detail

DataParallelImage data_parallel_step(const CompiledProgram& step, const core::CoreSpec& spec,
                                     const AllReduceOptions& o) {
  if (o.bucket_words > 0) return bucketed_data_parallel_step(step, spec, o);
  detail::check_step(step, spec, o);
  const float weight = detail::shard_weight(o);
  const std::vector<isa::Bundle>& code = step.program.code;
  const int64_t first = step.optimizer_first_bundle;
  DataParallelImage img;
  Codegen cg(spec, false);
  detail::append_step_code(cg, code, 0, first);
  img.reduce_first = cg.em().size();
  detail::emit_region_allreduce(cg, step.grads.hbm, step.grads.words, weight, o);
  detail::emit_model_state_allreduce(cg, step, weight, o);
  img.update_first = cg.em().size();
  detail::append_step_code(cg, code, first, static_cast<int64_t>(code.size()) - 1);  // no halt
  detail::finish_image(img, cg, step, spec, o);
  return img;
}

namespace detail {

void run_allreduce_pass(Pipeline& p) {
  p.image = data_parallel_step(p.out, *p.machine, *p.options.allreduce);
  p.out.program = p.image.program;
  p.out.stats.bundles = static_cast<int64_t>(p.out.program.code.size());
}

}  // namespace detail

void pass_allreduce(Pipeline& p) {
  TESSERA_CHECK(p.options.allreduce && p.options.allreduce->bucket_words <= 0,
                "the allreduce pass without its options");
  detail::run_allreduce_pass(p);
}

}  // namespace tessera::compiler
