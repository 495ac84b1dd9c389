#include "runtime/chip_inference.h"

#include <vector>

#include "runtime/replica_state.h"

namespace tessera::runtime {

void add_score(const InferenceScore& s, graph::EvalResult& acc) {
  acc.correct += s.correct;
  acc.loss_sum += static_cast<double>(s.loss) * s.samples;
  acc.predictions += s.predictions;
  acc.samples += s.samples;
}

int64_t write_batch(core::Core& core, const compiler::CompiledProgram& p, const void* x,
                    const int32_t* labels, int n, int64_t sample_words, int64_t label_words) {
  const int64_t words = static_cast<int64_t>(n) * sample_words;
  write_hbm_words(core, p.x.hbm, x, words);
  const int64_t label_count = static_cast<int64_t>(n) * label_words;
  write_hbm_words(core, p.labels.hbm, labels, label_count);
  return 4 * (words + label_count);
}

InferenceScore run_inference(core::Core& core, PeAttribution& pe,
                             const compiler::CompiledProgram& p,
                             std::shared_ptr<const core::DecodedProgram> decoded,
                             const int32_t* labels, int n, int64_t label_words) {
  core.load(p.program, std::move(decoded));
  pe.attach(core, p, false);  // per-layer accumulator widths
  core.run();
  pe.detach(core);
  const std::vector<float> logits = read_hbm_floats(core, p.logits.hbm, p.logits.words);
  const int64_t rows = n * label_words;
  const int64_t classes = p.logits.words / rows;
  InferenceScore s;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best]) best = c;
    s.correct += best == labels[r] ? 1 : 0;
  }
  s.loss = read_hbm_floats(core, p.loss.hbm, 1)[0];
  s.predictions = rows;
  s.samples = n;
  return s;
}

InferenceCore::InferenceCore(const core::CoreSpec& spec, const compiler::CompiledProgram& p,
                             std::shared_ptr<const core::DecodedProgram> decoded)
    : m_core(spec, p.program, std::move(decoded), p.program.index) {}

void InferenceCore::set_params(const compiler::CompiledProgram& layout, const Tensors& params) {
  write_params(m_core, layout, params);
}

void InferenceCore::set_model_state(const compiler::CompiledProgram& layout, const Tensors& state) {
  write_model_state(m_core, layout, state);
}

InferenceScore InferenceCore::infer(const compiler::CompiledProgram& p,
                                    std::shared_ptr<const core::DecodedProgram> decoded,
                                    const void* x, const int32_t* labels, int n,
                                    int64_t sample_words, int64_t label_words) {
  write_batch(m_core, p, x, labels, n, sample_words, label_words);
  return run_inference(m_core, m_pe, p, std::move(decoded), labels, n, label_words);
}

}  // namespace tessera::runtime
