#include "runtime/generate.h"

#include <bit>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "common/error.h"
#include "compiler/kernels_sample.h"
#include "compiler/lower_decode.h"
#include "core/core.h"
#include "core/decoded.h"
#include "graph/gpt_decode.h"
#include "runtime/checkpoint.h"

namespace tessera::runtime {

namespace {

int spec_field(const std::string& path, const nlohmann::ordered_json& gpt, const char* key) {
  if (!gpt.contains(key) || !gpt[key].is_number_integer())
    throw Error(path,
                std::string("the checkpoint's \"gpt\" identity has no integer \"") + key + "\"");
  return gpt[key].get<int>();
}

class HostDecoder : public Decoder {
 public:
  HostDecoder(const GptCheckpoint& c, const numerics::Sampling& s, int64_t words_per_rng)
      : m_decoder(c.spec, c.params, graph::Numerics::kChip),
        m_sampling(s),
        m_words_per_rng(words_per_rng) {}
  int feed(const std::vector<int32_t>& tokens) override {
    m_logits = m_decoder.feed(tokens);
    std::vector<uint32_t> words;
    if (m_sampling.temperature > 0)
      words =
          numerics::sampling_draw(m_sampling, m_draws++, m_words_per_rng, graph::kGptVocabulary);
    return numerics::sample_token(m_logits, m_sampling, words.data());
  }
  const std::vector<float>& logits() const override { return m_logits; }
  void reset() override { m_decoder.reset(); }
  int64_t cycles() const override { return 0; }

 private:
  graph::GptDecoder m_decoder;
  numerics::Sampling m_sampling;
  int64_t m_words_per_rng, m_draws = 0;
  std::vector<float> m_logits;
};

class ChipDecoder : public Decoder {
 public:
  ChipDecoder(const GptCheckpoint& c, const numerics::Sampling& s, const core::CoreSpec& spec)
      : m_spec(spec),
        m_layout(compiler::decode_layout(c.spec)),
        m_sampling(s),
        m_params(c.params),
        m_logits(graph::kGptVocabulary) {}

  int feed(const std::vector<int32_t>& tokens) override {
    const int m = static_cast<int>(tokens.size());
    const Compiled& prog = program(m_cached, m);
    if (m_core == nullptr) {  // the parameters and the RNG unit's seed, once
      isa::Program seed = compiler::rng_seed_program(m_sampling.seed, m_spec);
      for (size_t i = 0; i < m_params.size(); ++i) {
        std::vector<uint32_t> words(m_params[i].size());
        for (size_t j = 0; j < words.size(); ++j)
          words[j] = std::bit_cast<uint32_t>(m_params[i][j]);
        seed.data.push_back(isa::DataSegment{
            isa::Space::Hbm, static_cast<uint64_t>(m_layout.params[i]), std::move(words)});
      }
      m_core = std::make_unique<core::Core>(m_spec, seed);
      m_core->run();
      m_setup_cycles = m_core->cycles();
    }
    m_core->load(prog.program, prog.decoded);
    core::ArchState& s = m_core->host_state();
    std::vector<uint32_t> ids(tokens.begin(), tokens.end());
    s.hbm.write_block(m_layout.ids, ids.data(), m);
    m_core->run();
    s.hbm.read_block(m_layout.logits, reinterpret_cast<uint32_t*>(m_logits.data()),
                     graph::kGptVocabulary);
    uint32_t token = 0;
    s.hbm.read_block(m_layout.token, &token, 1);
    m_cached += m;
    return static_cast<int>(token);
  }
  const std::vector<float>& logits() const override { return m_logits; }
  void reset() override { m_cached = 0; }
  // The seeding program's cycles are not counted.
  int64_t cycles() const override {
    return m_core == nullptr ? 0 : m_core->cycles() - m_setup_cycles;
  }

 private:
  struct Compiled {
    isa::Program program;
    std::shared_ptr<const core::DecodedProgram> decoded;
  };
  // The program feeding m tokens at p0, compiled once per (p0, m).
  const Compiled& program(int p0, int m) {
    const auto key = std::make_pair(p0, m);
    auto it = m_programs.find(key);
    if (it == m_programs.end()) {
      Compiled c{compiler::feed_program(m_layout, p0, m, m_sampling, m_spec).program, nullptr};
      c.decoded = std::make_shared<const core::DecodedProgram>(
          core::decode_program(c.program.code, m_spec));
      it = m_programs.emplace(key, std::move(c)).first;
    }
    return it->second;
  }

  core::CoreSpec m_spec;
  compiler::DecodeLayout m_layout;
  numerics::Sampling m_sampling;
  std::vector<std::vector<float>> m_params;
  std::vector<float> m_logits;
  std::map<std::pair<int, int>, Compiled> m_programs;
  std::unique_ptr<core::Core> m_core;
  int64_t m_setup_cycles = 0;
  int m_cached = 0;
};

}  // namespace

GptCheckpoint read_gpt_checkpoint(const std::string& path) {
  GptCheckpoint g;
  g.path = path;
  if (std::filesystem::is_directory(path)) {
    const std::optional<std::string> newest = newest_checkpoint(path);
    if (!newest) throw Error(path, "no checkpoint in this directory (looked for ckpt-<step>.tsck)");
    g.path = *newest;
  }
  const Checkpoint c = read_checkpoint(g.path);
  const nlohmann::ordered_json& id = c.identity;
  const std::string model = id.contains("model") ? id["model"].dump() : "none";
  if (model != "\"gpt\"")
    throw Error(g.path, "a checkpoint of model " + model +
                            ", not \"gpt\": generate needs one "
                            "written by `tessera train --model gpt`");
  if (!id.contains("gpt") || !id["gpt"].is_object())
    throw Error(g.path,
                "the checkpoint's identity has no \"gpt\" object (d_model, heads, "
                "layers, context)");
  const nlohmann::ordered_json& s = id["gpt"];
  g.spec = {spec_field(g.path, s, "d_model"), spec_field(g.path, s, "heads"),
            spec_field(g.path, s, "layers"), spec_field(g.path, s, "context")};
  try {
    graph::GptDecoder check(g.spec, c.params, graph::Numerics::kChip);  // spec and shapes
  } catch (const Error& e) {
    throw Error(g.path, e.what());
  }
  g.params = c.params;
  return g;
}

std::unique_ptr<Decoder> host_decoder(const GptCheckpoint& c, const numerics::Sampling& s,
                                      int64_t words_per_rng) {
  return std::make_unique<HostDecoder>(c, s, words_per_rng);
}

std::unique_ptr<Decoder> chip_decoder(const GptCheckpoint& c, const numerics::Sampling& s,
                                      const core::CoreSpec& spec) {
  return std::make_unique<ChipDecoder>(c, s, spec);
}

void check_generate_options(const GenerateOptions& options) {
  const std::string where = "generate";
  if (options.prompt.empty()) throw Error(where, "--prompt is empty");
  if (options.tokens < 1)
    throw Error(where, "--tokens must be >= 1, got " + std::to_string(options.tokens));
  try {
    numerics::check_sampling(options.sampling, graph::kGptVocabulary);
  } catch (const Error& e) {
    throw Error(where, "--" + e.why());
  }
}

GenerateResult generate(Decoder& decoder, const graph::GptSpec& spec,
                        const GenerateOptions& options) {
  check_generate_options(options);
  const int ctx = spec.context;
  const int64_t prompt = static_cast<int64_t>(options.prompt.size());
  if (prompt > ctx)
    throw Error("generate", "the prompt has " + std::to_string(prompt) +
                                " bytes; the model's context is " + std::to_string(ctx));

  GenerateResult r;
  r.kv_cache_bytes = graph::GptDecoder::cache_bytes(spec, ctx);
  std::vector<int32_t> text;
  for (unsigned char ch : options.prompt) text.push_back(ch);
  int cached = static_cast<int>(prompt);
  int peak = cached;
  int token = decoder.feed(text);
  r.prefill_cycles = decoder.cycles();
  for (int i = 0; i < options.tokens; ++i) {
    text.push_back(token);
    r.text.push_back(static_cast<char>(token));
    if (i + 1 == options.tokens) break;
    if (cached < ctx) {
      token = decoder.feed({token});
      ++cached;
      ++r.steps;
    } else {
      const int keep = std::max(1, ctx / 2);
      decoder.reset();
      token = decoder.feed({text.end() - keep, text.end()});
      cached = keep;
      ++r.refills;
    }
    peak = std::max(peak, cached);
  }
  r.decode_cycles = decoder.cycles() - r.prefill_cycles;
  r.peak_cached_bytes = graph::GptDecoder::cache_bytes(spec, peak);
  return r;
}

}  // namespace tessera::runtime
