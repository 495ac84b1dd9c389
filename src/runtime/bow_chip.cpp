#include "runtime/bow_chip.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "common/error.h"
#include "graph/bow_model.h"
#include "numerics/sparse_optimizer.h"
#include "runtime/replica_state.h"
#include "runtime/sparse_step_host.h"

namespace tessera::runtime {

namespace {

// The length of [a0, a1) inside [b0, b1).
int64_t inside(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

int64_t longest_bag(const TopicCorpus& data) {
  int64_t longest = 1;
  for (const auto* set : {&data.train, &data.test})
    for (const TopicSample& s : *set)
      longest = std::max(longest, static_cast<int64_t>(s.ids.size()));
  return longest;
}

BowChipTrainer::BowChipTrainer(const BowRecipe& recipe, const core::CoreSpec& spec,
                               const BowChipOptions& o)
    : m_r(recipe), m_spec(spec), m_o(o) {
  if (o.max_bag < 1) throw Error("train", "the longest bag must hold at least one id");
  if (!(o.host_bytes_per_second > 0)) throw Error("train", "host link bandwidth must be positive");
  const compiler::CompiledProgram& p = program(m_r.batch, true);
  m_core = std::make_unique<core::Core>(m_spec, p.program);
  register_sparse_table(*m_core, p);
  const std::vector<std::vector<float>> init = bow_dense_init(m_r);
  write_hbm_words(*m_core, p.params[0].hbm, init[0]);
  write_hbm_words(*m_core, p.params[1].hbm, init[1]);
}

const compiler::CompiledProgram& BowChipTrainer::program(int n, bool training) {
  auto& slot = m_programs[{n, training}];
  if (!slot) {
    compiler::CompileOptions o;
    o.batch = n;
    o.training = training;
    o.optimizer.kind = graph::OptimizerKind::kAdagrad;
    o.optimizer.lr = m_r.lr;
    o.optimizer.lr_decay = m_r.lr_decay;
    o.optimizer.eps = m_r.eps;
    slot = std::make_unique<compiler::CompiledProgram>(
        compiler::compile(graph::build_bow(m_r.model, n, n * m_o.max_bag), m_spec, o));
  }
  return *slot;
}

const compiler::CompiledProgram& BowChipTrainer::trained() const {
  return *m_programs.at({m_r.batch, true});
}

int64_t BowChipTrainer::write_batch(const compiler::CompiledProgram& p,
                                    std::span<const TopicSample* const> batch) {
  const compiler::SparseBagPlan& plan = p.sparse.plan;
  const int64_t table = p.params.at(static_cast<size_t>(p.sparse.param)).hbm;
  std::vector<int32_t> ids, offsets{0}, labels;
  for (const TopicSample* s : batch) {
    if (static_cast<int64_t>(s->ids.size()) > m_o.max_bag)
      throw Error("train", "a bag of " + std::to_string(s->ids.size()) +
                               " ids is longer than the longest bag the trainer was built for (" +
                               std::to_string(m_o.max_bag) + ")");
    for (int32_t id : s->ids) {
      if (id < 0 || id >= m_r.model.rows)
        throw Error("train", "id " + std::to_string(id) + " outside the table's " +
                                 std::to_string(m_r.model.rows) + " rows");
      ids.push_back(id);
      if (m_written.insert(id).second)
        write_hbm_words(*m_core, table + int64_t{id} * m_r.model.dim,
                        graph::bow_table_row(m_r.model, m_r.seed, id));
    }
    offsets.push_back(static_cast<int32_t>(ids.size()));
    labels.push_back(s->label);
  }
  write_hbm_words(*m_core, plan.in.ids, ids);
  write_hbm_words(*m_core, plan.in.offsets, offsets);
  write_hbm_words(*m_core, p.labels.hbm, labels);
  return 4 * static_cast<int64_t>(ids.size() + offsets.size() + labels.size());
}

void BowChipTrainer::run(const compiler::CompiledProgram& p, bool training) {
  core::SparseCore& sc = m_core->machine().sparse();
  core::ArchState& st = m_core->host_state();
  const core::SparseCoreStats before = sc.stats();
  // The run starts once both units are done with the previous one (the tensor core waits for the
  // gather, which starts when the sparse core is free).
  const int64_t start = std::max(m_core->cycles(), sc.busy_until());
  const int64_t gathered = run_sparse_forward(*m_core, p);
  m_core->load(p.program);
  m_core->run();
  const int64_t core_end = m_core->cycles();
  if (!training) return;
  // dedup, wait, scatter-add, update (lower_sparse.h), run in three parts for their intervals.
  const std::vector<core::SparseDescriptor> back =
      compiler::sparse_backward(p.sparse.plan, p.sparse.optimizer);
  sc.enqueue(back.at(0));
  const int64_t dedup_start = sc.busy_until();
  const int64_t deduped = sc.run(st, 0);
  sc.enqueue(back.at(1));
  const int64_t waited = sc.run(st, 0);
  sc.enqueue(back.at(2));
  sc.enqueue(back.at(3));
  const int64_t end = sc.run(st, 0);
  const core::SparseCoreStats& after = sc.stats();
  BowChipFigures& f = m_fig;
  ++f.steps;
  f.cycles += std::max(core_end, end) - start;
  f.tensor_cycles += core_end - start;
  const int64_t waited_cycles = after.wait_cycles - before.wait_cycles;
  f.sparse_busy += after.busy_cycles - before.busy_cycles - waited_cycles;  // busy counts waits
  f.sparse_wait += waited_cycles;
  f.overlap +=
      inside(dedup_start, deduped, gathered, core_end) + inside(waited, end, gathered, core_end);
  const int64_t reads = after.row_reads - before.row_reads;
  const int64_t writes = after.row_writes - before.row_writes;
  f.row_reads += reads;
  f.row_writes += writes;
  f.row_bytes +=
      (reads + writes) * sc.requests_of(4 * m_r.model.dim) * m_spec.sparse.hbm_request_bytes;
  f.sparse_hbm_read_bytes += after.hbm_read_bytes - before.hbm_read_bytes;
  f.sparse_hbm_write_bytes += after.hbm_write_bytes - before.hbm_write_bytes;
  f.vmem_handoff_bytes += after.vmem_bytes - before.vmem_bytes;
  f.vmem_steps += p.sparse.plan.to == core::SparseDest::Vmem ? 1 : 0;
}

double BowChipTrainer::step(std::span<const TopicSample* const> batch) {
  const compiler::CompiledProgram& p = program(static_cast<int>(batch.size()), true);
  const int64_t bytes = write_batch(p, batch);
  for (const TopicSample* s : batch) m_trained.insert(s->ids.begin(), s->ids.end());
  ++m_steps;
  const float clr = numerics::adagrad_step_lr(m_r.lr, m_r.lr_decay, m_steps);
  write_hbm_words(*m_core, p.scalars.hbm, std::vector<float>{clr});
  m_fig.host_link_bytes += bytes;
  m_fig.host_link_seconds += static_cast<double>(bytes) / m_o.host_bytes_per_second;
  run(p, true);
  return read(p.loss.hbm, 1)[0];
}

double BowChipTrainer::accuracy(std::span<const TopicSample> samples) {
  int64_t right = 0;
  std::vector<const TopicSample*> batch;
  for (size_t first = 0; first < samples.size(); first += kBowEvalBatch) {
    batch.clear();
    for (size_t i = first; i < std::min(samples.size(), first + kBowEvalBatch); ++i)
      batch.push_back(&samples[i]);
    const compiler::CompiledProgram& p = program(static_cast<int>(batch.size()), false);
    write_batch(p, batch);
    run(p, false);
    right += bow_hits(batch, read(p.logits.hbm, p.logits.words), m_r.model.classes);
  }
  return samples.empty() ? 0 : static_cast<double>(right) / static_cast<double>(samples.size());
}

std::vector<float> BowChipTrainer::read(int64_t addr, int64_t n) const {
  return read_hbm_floats(*m_core, addr, n);
}

std::vector<float> BowChipTrainer::table_row(int32_t id) {
  const compiler::CompiledProgram& p = trained();
  const int64_t table = p.params.at(static_cast<size_t>(p.sparse.param)).hbm;
  if (m_written.insert(id).second)
    write_hbm_words(*m_core, table + int64_t{id} * m_r.model.dim,
                    graph::bow_table_row(m_r.model, m_r.seed, id));
  return read(table + int64_t{id} * m_r.model.dim, m_r.model.dim);
}

std::vector<float> BowChipTrainer::table_state(int32_t id) const {
  const compiler::CompiledProgram& p = trained();
  return read(p.state.at(static_cast<size_t>(p.sparse.param)).hbm + int64_t{id} * m_r.model.dim,
              m_r.model.dim);
}

std::vector<float> BowChipTrainer::fc_w() const {
  return read(trained().params[0].hbm, trained().params[0].words);
}
std::vector<float> BowChipTrainer::fc_b() const {
  return read(trained().params[1].hbm, trained().params[1].words);
}
std::vector<float> BowChipTrainer::fc_w_state() const {
  return read(trained().state[0].hbm, trained().state[0].words);
}
std::vector<float> BowChipTrainer::fc_b_state() const {
  return read(trained().state[1].hbm, trained().state[1].words);
}

namespace {

// BowChipFigures' counters by name (checkpoints).
constexpr std::pair<const char*, int64_t BowChipFigures::*> kFigureCounts[] = {
    {"steps", &BowChipFigures::steps},
    {"cycles", &BowChipFigures::cycles},
    {"tensor_cycles", &BowChipFigures::tensor_cycles},
    {"sparse_busy", &BowChipFigures::sparse_busy},
    {"sparse_wait", &BowChipFigures::sparse_wait},
    {"overlap", &BowChipFigures::overlap},
    {"row_reads", &BowChipFigures::row_reads},
    {"row_writes", &BowChipFigures::row_writes},
    {"row_bytes", &BowChipFigures::row_bytes},
    {"sparse_hbm_read_bytes", &BowChipFigures::sparse_hbm_read_bytes},
    {"sparse_hbm_write_bytes", &BowChipFigures::sparse_hbm_write_bytes},
    {"vmem_handoff_bytes", &BowChipFigures::vmem_handoff_bytes},
    {"vmem_steps", &BowChipFigures::vmem_steps},
    {"host_link_bytes", &BowChipFigures::host_link_bytes},
};

[[noreturn]] void not_this_model(const std::string& why) {
  throw Error("checkpoint", "not a checkpoint of this bow model: " + why);
}

}  // namespace

Checkpoint BowChipTrainer::checkpoint() const {
  const compiler::CompiledProgram& p = trained();
  const int64_t dim = m_r.model.dim;
  std::vector<int32_t> ids(m_trained.begin(), m_trained.end());
  std::sort(ids.begin(), ids.end());
  const int64_t table = p.params.at(static_cast<size_t>(p.sparse.param)).hbm;
  const int64_t state = p.state.at(static_cast<size_t>(p.sparse.param)).hbm;
  std::vector<float> rows, acc;
  rows.reserve(ids.size() * static_cast<size_t>(dim));
  acc.reserve(rows.capacity());
  for (int32_t id : ids) {
    const std::vector<float> r = read(table + int64_t{id} * dim, dim);
    const std::vector<float> s = read(state + int64_t{id} * dim, dim);
    rows.insert(rows.end(), r.begin(), r.end());
    acc.insert(acc.end(), s.begin(), s.end());
  }
  Checkpoint c;
  c.params = {fc_w(), fc_b(), std::move(rows)};
  c.state = {fc_w_state(), fc_b_state(), std::move(acc)};
  nlohmann::ordered_json fig;
  for (const auto& [name, field] : kFigureCounts) fig[name] = m_fig.*field;
  fig["host_link_seconds_bits"] = std::bit_cast<uint64_t>(m_fig.host_link_seconds);
  const core::SparseCore& sc = m_core->machine().sparse();
  c.progress["bow"] = {{"rows", ids},
                       {"steps", m_steps},
                       {"table_steps", sc.adagrad_step(p.sparse.plan.shape.table)},
                       {"cycle", std::max(m_core->cycles(), sc.busy_until())},
                       {"figures", fig}};
  return c;
}

void BowChipTrainer::restore(const Checkpoint& c) {
  if (m_steps != 0 || !m_trained.empty())
    throw Error("checkpoint", "a bow trainer resumes before its first step");
  if (!c.progress.contains("bow")) not_this_model("it holds no bow progress");
  const nlohmann::ordered_json& b = c.progress["bow"];
  const compiler::CompiledProgram& p = trained();
  const int64_t dim = m_r.model.dim;
  std::vector<int32_t> ids;
  int64_t steps = 0, table_steps = 0, cycle = 0;
  BowChipFigures fig;
  try {
    ids = b.at("rows").get<std::vector<int32_t>>();
    steps = b.at("steps").get<int64_t>();
    table_steps = b.at("table_steps").get<int64_t>();
    cycle = b.at("cycle").get<int64_t>();
    for (const auto& [name, field] : kFigureCounts)
      fig.*field = b.at("figures").at(name).get<int64_t>();
    fig.host_link_seconds =
        std::bit_cast<double>(b.at("figures").at("host_link_seconds_bits").get<uint64_t>());
  } catch (const nlohmann::json::exception& e) {
    not_this_model(std::string("its bow progress is malformed (") + e.what() + ")");
  }
  const auto rows_words = ids.size() * static_cast<size_t>(dim);
  const auto words = [&](size_t i) { return static_cast<size_t>(p.params[i].words); };
  if (c.params.size() != 3 || c.state.size() != 3 || c.params[0].size() != words(0) ||
      c.params[1].size() != words(1) || c.params[2].size() != rows_words ||
      c.state[0].size() != words(0) || c.state[1].size() != words(1) ||
      c.state[2].size() != rows_words)
    not_this_model("its tensors are not fc.w " + std::to_string(words(0)) + ", fc.b " +
                   std::to_string(words(1)) + " and " + std::to_string(ids.size()) +
                   " table rows of " + std::to_string(dim) + " words, with their accumulators");
  for (int32_t id : ids)
    if (id < 0 || id >= m_r.model.rows)
      not_this_model("row " + std::to_string(id) + " outside the table's " +
                     std::to_string(m_r.model.rows) + " rows");
  write_hbm_words(*m_core, p.params[0].hbm, c.params[0]);
  write_hbm_words(*m_core, p.params[1].hbm, c.params[1]);
  write_hbm_words(*m_core, p.state[0].hbm, c.state[0]);
  write_hbm_words(*m_core, p.state[1].hbm, c.state[1]);
  const int64_t table = p.params.at(static_cast<size_t>(p.sparse.param)).hbm;
  const int64_t state = p.state.at(static_cast<size_t>(p.sparse.param)).hbm;
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto at = c.params[2].begin() + static_cast<std::ptrdiff_t>(k) * dim;
    const auto sat = c.state[2].begin() + static_cast<std::ptrdiff_t>(k) * dim;
    write_hbm_words(*m_core, table + int64_t{ids[k]} * dim, std::vector<float>(at, at + dim));
    write_hbm_words(*m_core, state + int64_t{ids[k]} * dim, std::vector<float>(sat, sat + dim));
    m_written.insert(ids[k]);
    m_trained.insert(ids[k]);
  }
  m_steps = steps;
  m_fig = fig;
  m_core->machine().sparse().set_adagrad_step(p.sparse.plan.shape.table, table_steps);
  m_core->advance_clock(std::max(m_core->cycles(), cycle));
}

}  // namespace tessera::runtime
