// DataParallelTrainer::evaluate (data_parallel.h): the batches split over the ranks in contiguous
// blocks, each rank's block over its host threads in contiguous chunks, one inference core per
// chunk; the scores gathered from every rank and added in batch order.
#include <algorithm>
#include <cstring>

#include "common/byte_codec.h"
#include "runtime/data_parallel.h"

namespace tessera::runtime {

void DataParallelTrainer::evaluate(std::span<const Batch> batches, graph::EvalResult& acc) {
  const Tensors weights = params(0);       // collective
  const Tensors averages = model_state();  // collective
  system::Communicator& comm = m_system->communicator();
  const RankBlock mine = rank_block(static_cast<int>(batches.size()), comm.size(), comm.rank());
  // Compiled and decoded here, before the threads read them.
  std::vector<const compiler::CompiledProgram*> program_of(static_cast<size_t>(mine.count));
  std::vector<std::shared_ptr<const core::DecodedProgram>> decoded_of(program_of.size());
  for (int i = 0; i < mine.count; ++i) {
    const compiler::CompiledProgram& p = m_eval->program(batches[mine.first + i].size, false);
    program_of[static_cast<size_t>(i)] = &p;
    decoded_of[static_cast<size_t>(i)] = m_eval->decoded(p.program);
  }
  const compiler::CompiledProgram& layout = m_eval->layout();
  const int chunks = std::min(m_system->threads(), mine.count);
  if (static_cast<int>(m_eval_cores.size()) < chunks)
    m_eval_cores.resize(static_cast<size_t>(chunks));
  std::vector<InferenceScore> scores(static_cast<size_t>(mine.count));
  m_system->run_on_threads(chunks, [&](int c) {  // each touches its own core and scores only
    std::unique_ptr<InferenceCore>& core = m_eval_cores[static_cast<size_t>(c)];
    const RankBlock chunk = rank_block(mine.count, chunks, c);
    if (!core)
      core = std::make_unique<InferenceCore>(m_spec, *program_of[static_cast<size_t>(chunk.first)],
                                             decoded_of[static_cast<size_t>(chunk.first)]);
    core->set_params(layout, weights);
    core->set_model_state(layout, averages);
    for (int i = chunk.first; i < chunk.first + chunk.count; ++i) {
      const Batch& b = batches[mine.first + i];
      const void* x = b.ids.empty() ? static_cast<const void*>(b.images.data()) : b.ids.data();
      scores[static_cast<size_t>(i)] =
          core->infer(*program_of[static_cast<size_t>(i)], decoded_of[static_cast<size_t>(i)], x,
                      b.labels.data(), b.size, m_sample, m_labels);
    }
  });
  ByteWriter out;
  for (const InferenceScore& s : scores) {
    out.put(s.loss);
    out.put(s.correct);
    out.put(s.predictions);
    out.put(s.samples);
  }
  for (const system::Bytes& b : comm.allgather(out.bytes())) {  // ranks hold ascending blocks
    ByteReader in(b);
    while (!in.done()) {
      InferenceScore s;
      s.loss = in.get<float>();
      s.correct = in.get<int64_t>();
      s.predictions = in.get<int64_t>();
      s.samples = in.get<int>();
      add_score(s, acc);
    }
  }
}

}  // namespace tessera::runtime
