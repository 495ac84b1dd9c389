// The bucketed gradient all-reduce overlapped with the backward pass (data_parallel.h).
#include <algorithm>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/allreduce_detail.h"
#include "compiler/collectives.h"
#include "compiler/data_parallel.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

using isa::Opcode;

// Rows of `words` words in whole vector registers.
int64_t region_rows(const core::CoreSpec& spec, int64_t words) {
  const int64_t group = int64_t{spec.sublanes} * spec.lanes;
  return (words + group - 1) / group * spec.sublanes;
}

struct Piece {
  int64_t hbm = 0, words = 0, at = 0;  // at: word offset in the region
};

struct Bucket {
  std::vector<Piece> pieces;
  int64_t words = 0;
  int ready = 0;  // the node after whose kernel every piece is final
};

std::vector<Bucket> plan_buckets(const CompiledProgram& step, int64_t bucket_words) {
  std::vector<size_t> order(step.params.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return step.grad_kernel[a] < step.grad_kernel[b]; });
  std::vector<Bucket> out;
  for (size_t i : order) {
    const HbmTensor& t = step.params[i];
    if (out.empty() || (out.back().words > 0 && out.back().words + t.words > bucket_words))
      out.emplace_back();
    Bucket& b = out.back();
    b.pieces.push_back(Piece{step.grads.hbm + t.hbm - step.params.front().hbm, t.words, b.words});
    b.words += t.words;
    b.ready = std::max(b.ready, step.grad_kernel[i]);
  }
  for (Bucket& b : out) {  // in HBM order in the region; HBM-adjacent pieces become one DMA
    std::sort(b.pieces.begin(), b.pieces.end(),
              [](const Piece& x, const Piece& y) { return x.hbm < y.hbm; });
    std::vector<Piece> merged;
    int64_t at = 0;
    for (const Piece& p : b.pieces) {
      if (!merged.empty() && merged.back().hbm + merged.back().words == p.hbm)
        merged.back().words += p.words;
      else
        merged.push_back(Piece{p.hbm, p.words, at});
      at += p.words;
    }
    b.pieces = std::move(merged);
  }
  return out;
}

// Code generation for the buckets of one image, into the image's Codegen.
class BucketCode {
 public:
  BucketCode(const std::vector<Bucket>& buckets, const core::CoreSpec& spec,
             const AllReduceOptions& o, int64_t region_row, Codegen& cg)
      : m_buckets(buckets),
        m_spec(spec),
        m_o(o),
        m_weight(detail::shard_weight(o)),
        m_cg(cg),
        m_regs(1, kRegStride - 1) {
    for (const Bucket& b : buckets) {  // each bucket its own whole vector registers
      m_row.push_back(region_row);
      region_row += region_rows(spec, b.words);
    }
    m_steps = buckets.empty() ? 0 : collective_steps(this->spec(0));
  }

  // Supersteps of every bucket's all-reduce (ring or torus: they depend on the processors and the
  // grid only).
  int steps() const { return m_steps; }
  Codegen& cg() { return m_cg; }

  void start(int b) {
    const detail::DmaRegs r(m_regs);
    dma(b, r, true);
    detail::emit_scale(m_cg, m_regs, row(b), rows(b), m_weight);
  }
  void finish(int b) { dma(b, detail::DmaRegs(m_regs), false); }
  // Superstep k of bucket b, packed into bundles by the list scheduler with the other buckets'
  // sends of the same superstep (straight-line code: its values are those of running its
  // instructions one after the other, emitter.h; the sends keep their order).
  void superstep(int b, int k) {
    const Codegen::Packed packed(m_cg);
    emit_collective_step(m_cg, m_regs, spec(b), k, m_o.processor);
  }

 private:
  int64_t row(int b) const { return m_row[static_cast<size_t>(b)]; }
  int64_t rows(int b) const { return region_rows(m_spec, m_buckets[static_cast<size_t>(b)].words); }
  CollectiveSpec spec(int b) const {
    CollectiveSpec cs;
    cs.kind = CollectiveKind::kAllReduce;
    cs.processors = m_o.processors;
    cs.base = static_cast<uint32_t>(row(b) * m_spec.lanes);
    cs.words = static_cast<uint32_t>(m_buckets[static_cast<size_t>(b)].words);
    cs.rings = m_o.rings;
    cs.directions = m_o.directions;
    cs.algorithm = m_o.algorithm;
    cs.grid = m_o.grid;
    return cs;
  }
  // One DMA per piece between its HBM words and its place in the region (in: HBM -> vmem), then
  // one wait for all.
  void dma(int b, const detail::DmaRegs& r, bool in) {
    const std::vector<Piece>& pieces = m_buckets[static_cast<size_t>(b)].pieces;
    for (const Piece& p : pieces) {
      const int64_t vmem = row(b) * m_spec.lanes + p.at;
      m_cg.put(Opcode::SLI, r.r[0], 0, 0, 0, static_cast<int32_t>(in ? vmem : p.hbm));
      m_cg.put(Opcode::SLI, r.r[1], 0, 0, 0, static_cast<int32_t>(in ? p.hbm : vmem));
      m_cg.put(Opcode::SLI, r.r[2], 0, 0, 0, static_cast<int32_t>(p.words));
      m_cg.put(in ? Opcode::DMAHV : Opcode::DMAVH, r.r[0], r.r[1], r.r[2], kAllReduceFlag);
    }
    m_cg.put(Opcode::WAIT, 0, kAllReduceFlag, 0, 0, static_cast<int32_t>(pieces.size()));
  }

  const std::vector<Bucket>& m_buckets;
  const core::CoreSpec& m_spec;
  const AllReduceOptions& m_o;
  std::vector<int64_t> m_row;  // first region row of each bucket
  float m_weight;
  Codegen& m_cg;
  HeldRegs m_regs;
  int m_steps = 0;
};

// Buckets advance in lockstep: each superstep carries the next ring step of every active bucket.
class Scheduler {
 public:
  Scheduler(const std::vector<Bucket>& buckets, BucketCode& code)
      : m_buckets(buckets), m_code(code), m_step(buckets.size(), -1) {}

  // Starts every bucket ready before node `node` (all with node < 0), finishes the done ones,
  // then one superstep of every active bucket ending in `sync_op` (none when none is active).
  void superstep(int node, Opcode sync_op) {
    for (size_t b = 0; b < m_buckets.size(); ++b) {
      if (m_step[b] < 0 && m_next == static_cast<int>(b) &&
          (node < 0 || m_buckets[b].ready < node)) {
        m_code.start(static_cast<int>(b));
        m_step[b] = 0;
        ++m_next;
      }
      if (m_step[b] == m_code.steps()) {
        m_code.finish(static_cast<int>(b));
        ++m_step[b];
      }
    }
    m_pending = false;
    for (size_t b = 0; b < m_buckets.size(); ++b)
      if (m_step[b] >= 0 && m_step[b] < m_code.steps()) {
        m_code.superstep(static_cast<int>(b), m_step[b]++);
        m_pending = true;
      }
    if (m_pending) m_code.cg().put(sync_op);
  }
  // `xwait` if a superstep is in flight.
  void wait_pending() {
    if (m_pending) m_code.cg().put(Opcode::XWAIT);
  }
  bool pending() const { return m_pending; }
  bool done() const {
    return m_next == static_cast<int>(m_buckets.size()) && m_step.back() > m_code.steps();
  }

 private:
  const std::vector<Bucket>& m_buckets;
  BucketCode& m_code;
  std::vector<int> m_step;  // per bucket: -1 not started, k = next superstep, steps + 1 finished
  int m_next = 0;           // buckets start in order
  bool m_pending = false;
};

void check_bucketed(const CompiledProgram& step, const core::CoreSpec& spec,
                    const AllReduceOptions& o) {
  detail::check_step(step, spec, o);
  if (step.kernel_first.empty() || step.grad_kernel.size() != step.params.size())
    throw Error("data-parallel",
                "bucketed all-reduce: the step was not compiled with kernel_barriers");
  const int64_t row =
      bucket_step_spec(spec, step.grads.words, static_cast<int>(step.params.size()), o.bucket_words)
          .vmem_rows();
  if (step.stats.vmem_peak_rows > row)
    throw Error(
        "data-parallel",
        fmt::format("bucketed all-reduce: the step's kernels use vector-memory rows up to {}, "
                    "the bucket region starts at row {} (compile for bucket_step_spec)",
                    step.stats.vmem_peak_rows, row));
}

// Error when a branch of the step crosses `at` (code inserted there would split its loop).
void check_no_branch_across(const std::vector<isa::Bundle>& code, int64_t at) {
  for (size_t i = 0; i < code.size(); ++i)
    for (const isa::Instr& in : code[i].slot)
      if (detail::is_branch(in.op) && (static_cast<int64_t>(i) < at) != (in.imm < at))
        throw Error("data-parallel",
                    fmt::format("bucketed all-reduce: the branch at bundle {} crosses the kernel "
                                "boundary at bundle {}",
                                i, at));
}

}  // namespace

core::CoreSpec bucket_step_spec(const core::CoreSpec& spec, int64_t gradient_words, int parameters,
                                int64_t bucket_words) {
  if (bucket_words < 1)
    throw Error("data-parallel", fmt::format("bucket of {} words: need at least 1", bucket_words));
  // Each bucket pads to whole vector registers: at most one group of sublanes rows per parameter.
  const int64_t rows = region_rows(spec, gradient_words) + int64_t{parameters} * spec.sublanes;
  if (2 * rows > spec.vmem_rows())
    throw Error(
        "data-parallel",
        fmt::format("the gradient buckets ({} words in {} parameters) need {} vector-memory "
                    "rows; at most half of the {} rows may be reserved (the kernels keep the "
                    "rest)",
                    gradient_words, parameters, rows, spec.vmem_rows()));
  core::CoreSpec out = spec;
  out.vmem_bytes -= rows * 4 * spec.lanes;
  return out;
}

DataParallelImage bucketed_data_parallel_step(const CompiledProgram& step,
                                              const core::CoreSpec& spec,
                                              const AllReduceOptions& o) {
  check_bucketed(step, spec, o);
  const std::vector<Bucket> buckets = plan_buckets(step, o.bucket_words);
  DataParallelImage img;
  Codegen cg(spec, false);
  BucketCode code(
      buckets, spec, o,
      bucket_step_spec(spec, step.grads.words, static_cast<int>(step.params.size()), o.bucket_words)
          .vmem_rows(),
      cg);
  Scheduler sch(buckets, code);
  const std::vector<isa::Bundle>& src = step.program.code;
  // At each kernel boundary of the step before the last kernel (overlap): the pending superstep's
  // xwait, then the next superstep ending in xsync. Nothing to overlap after a node without code
  // (an alias): no code there.
  int64_t prev = 0;
  const int kernels = static_cast<int>(step.kernel_first.size()) - 1;
  for (int j = 1; o.overlap && j < kernels; ++j) {
    const int64_t at = step.kernel_first[static_cast<size_t>(j)];
    if (at == step.kernel_first[static_cast<size_t>(j - 1)]) continue;
    detail::append_step_code(cg, src, prev, at);
    prev = at;
    const int64_t before = cg.em().size();
    sch.wait_pending();
    sch.superstep(j, Opcode::XSYNC);
    img.overlapped_supersteps += sch.pending() ? 1 : 0;
    if (cg.em().size() != before) check_no_branch_across(src, at);
  }
  // The tail, after the backward pass: supersteps ending in sync until every bucket is finished.
  detail::append_step_code(cg, src, prev, step.optimizer_first_bundle);
  img.reduce_first = cg.em().size();
  sch.wait_pending();
  while (!sch.done()) sch.superstep(-1, Opcode::SYNC);
  detail::emit_model_state_allreduce(cg, step, detail::shard_weight(o), o);
  img.update_first = cg.em().size();
  detail::append_step_code(cg, src, step.optimizer_first_bundle,
                           static_cast<int64_t>(src.size()) - 1);  // no halt
  detail::finish_image(img, cg, step, spec, o);
  img.buckets = static_cast<int>(buckets.size());
  return img;
}

void pass_bucket_allreduce(Pipeline& p) {
  TESSERA_CHECK(p.options.allreduce && p.options.allreduce->bucket_words > 0,
                "the buckets pass without its options");
  detail::run_allreduce_pass(p);
}

}  // namespace tessera::compiler
