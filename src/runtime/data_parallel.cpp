#include "runtime/data_parallel.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "compiler/collectives.h"
#include "numerics/optimizer.h"
#include "runtime/data_parallel_machine.h"
#include "runtime/replica_state.h"
#include "system/collective_grid.h"

namespace tessera::runtime {

namespace {

// Processor p's HBM tensors as floats on every rank, in one collective (system.h): their words
// concatenated in the order given.
Tensors read_on_every_rank(const system::System& sys, int p,
                           const std::vector<compiler::HbmTensor>& tensors) {
  const system::Bytes b = sys.from_processor(p, [&](const core::Core& c) {
    system::Bytes out;
    for (const compiler::HbmTensor& t : tensors) {
      const std::vector<float> v = read_hbm_floats(c, t.hbm, t.words);
      const auto* bytes = reinterpret_cast<const uint8_t*>(v.data());
      out.insert(out.end(), bytes, bytes + 4 * v.size());
    }
    return out;
  });
  Tensors out;
  size_t at = 0;
  for (const compiler::HbmTensor& t : tensors) {
    const size_t n = 4 * static_cast<size_t>(t.words);
    TESSERA_CHECK(at + n <= b.size(), "processor words from another rank");
    std::vector<float>& v = out.emplace_back(static_cast<size_t>(t.words));
    if (n > 0) std::memcpy(v.data(), b.data() + at, n);
    at += n;
  }
  TESSERA_CHECK(at == b.size(), "processor words from another rank");
  return out;
}

}  // namespace

DataParallelTrainer::DataParallelTrainer(const TrainModel& model, const core::CoreSpec& spec,
                                         const DataParallelOptions& options)
    : m_model(model), m_spec(spec), m_options(options) {
  system::validate_system_spec(options.system);
  const int procs = options.system.processors();
  check_data_parallel_batch(options.system, options.trainer.batch);
  if (options.directions < 0 || options.directions > 2)
    throw Error("train", "directions must be 0 (auto), 1 or 2");
  m_directions = options.directions != 0                                       ? options.directions
                 : options.system.duplex == system::Duplex::kFull && procs > 2 ? 2
                                                                               : 1;
  const int shard0 = static_cast<int>(
      compiler::split_range(static_cast<uint32_t>(options.trainer.batch), procs, 0).second);
  const compiler::CompiledProgram& p = program(shard0);
  system::SystemOptions so;
  so.seed = options.fabric_seed;
  so.comm = options.comm;
  so.threads = options.threads;
  m_system = std::make_unique<system::System>(spec, options.system,
                                              image(shard0, options.trainer.batch).program, so);
  const graph::Model m = build_train_model(model, shard0);
  m_sample = graph::num_elements(m.graph.value(m.input).shape) / shard0;
  m_labels = graph::num_elements(m.graph.value(m.labels).shape) / shard0;
  const std::vector<std::vector<float>> init = init_train_params(model, m, options.trainer.seed);
  m_system->for_each_local([&](int q) {
    start_replica(m_system->core(q), p, init);
    write_model_state(m_system->core(q), p, model.initial_state);
  });
  ChipTrainerOptions eo = options.trainer;
  eo.batch = shard0;
  m_eval = std::make_unique<ChipTrainer>(model, spec, eo);
}

DataParallelTrainer::~DataParallelTrainer() = default;

const compiler::CompiledProgram& DataParallelTrainer::program(int shard) {
  auto& slot = m_programs[shard];
  if (!slot) {
    compiler::CompileOptions o;
    o.batch = shard;
    o.training = true;
    o.optimizer = m_options.trainer.optimizer;
    o.adam_on = m_options.trainer.adam_on;
    o.persistent_grads = true;
    o.kernel_barriers = m_options.bucket_words > 0;
    int64_t gradient_words = 0;
    const graph::Model m = build_train_model(m_model, shard);
    for (int id : m.params) gradient_words += graph::num_elements(m.graph.value(id).shape);
    const core::CoreSpec spec =
        m_options.bucket_words > 0
            ? compiler::bucket_step_spec(m_spec, gradient_words, static_cast<int>(m.params.size()),
                                         m_options.bucket_words)
            : m_spec;
    slot = std::make_unique<compiler::CompiledProgram>(compile_train_model(m_model, spec, o));
  }
  return *slot;
}

const compiler::DataParallelImage& DataParallelTrainer::image(int shard, int n) {
  auto& slot = m_images[{shard, n}];
  if (!slot) {
    compiler::AllReduceOptions o;
    o.processors = m_options.system.processors();
    o.shard = shard;
    o.global_batch = n;
    o.rings = m_options.rings;
    o.directions = m_directions;
    o.algorithm = m_options.allreduce;
    if (o.algorithm == compiler::CollectiveAlgorithm::kTorus)
      o.grid = system::collective_grid(m_options.system);
    o.bucket_words = m_options.bucket_words;
    o.overlap = m_options.overlap;
    slot = std::make_unique<compiler::DataParallelImage>(
        compiler::data_parallel_step(program(shard), m_spec, o));
  }
  return *slot;
}

std::shared_ptr<const core::DecodedProgram> DataParallelTrainer::decoded(
    const compiler::DataParallelImage& image) {
  auto& slot = m_decoded[&image];
  if (!slot)
    slot = std::make_shared<const core::DecodedProgram>(
        core::decode_program(image.program.code, m_spec));
  return slot;
}

void DataParallelTrainer::write_shard(int p, const compiler::CompiledProgram& prog, const void* x,
                                      const int32_t* labels, int first, int count) {
  core::Core& c = m_system->core(p);
  write_hbm_words(c, prog.x.hbm, static_cast<const uint32_t*>(x) + first * m_sample,
                  count * m_sample);
  write_hbm_words(c, prog.labels.hbm, labels + first * m_labels, count * m_labels);
}

double DataParallelTrainer::step(const float* images, const int32_t* labels, int n) {
  return train(images, labels, n);
}

double DataParallelTrainer::step(const int32_t* ids, const int32_t* labels, int n) {
  return train(ids, labels, n);
}

double DataParallelTrainer::train(const void* x, const int32_t* labels, int n) {
  const int procs = processors();
  if (n < procs)
    throw Error("train",
                fmt::format("a batch of {} samples cannot be split over {} processors", n, procs));
  ++m_steps;
  uint32_t scalars[2] = {0, 0};
  const bool adam = m_options.trainer.optimizer.kind == graph::OptimizerKind::kAdam;
  if (adam) {
    const graph::OptimizerConfig& o = m_options.trainer.optimizer;
    const auto sc = numerics::adam_step_scalars(o.lr, o.beta1, o.beta2, m_steps);
    std::memcpy(&scalars[0], &sc.step, 4);
    std::memcpy(&scalars[1], &sc.sqrt_bc2, 4);
  }
  std::vector<int64_t> chip_bytes(static_cast<size_t>(m_options.system.chips), 0);
  std::vector<std::pair<int, int>> shards;
  std::vector<const compiler::DataParallelImage*> images_of;  // per processor
  for (int p = 0; p < procs; ++p) {
    const auto [b, e] = compiler::split_range(static_cast<uint32_t>(n), procs, p);
    const int count = static_cast<int>(e - b);
    shards.emplace_back(static_cast<int>(b), count);
    chip_bytes[static_cast<size_t>(p / m_options.system.cores_per_chip)] +=
        4 * count * (m_sample + m_labels);
    images_of.push_back(&image(count, n));  // compiled here, before the threads read them
  }
  std::vector<std::shared_ptr<const core::DecodedProgram>> decoded_of;  // per processor
  for (const compiler::DataParallelImage* img : images_of) decoded_of.push_back(decoded(*img));
  m_system->for_each_local([&](int p) {  // each touches processor p's core only
    const auto [first, count] = shards[static_cast<size_t>(p)];
    const compiler::CompiledProgram& prog = *m_programs.at(count);
    write_shard(p, prog, x, labels, first, count);
    if (adam) m_system->core(p).host_state().hbm.write_block(prog.scalars.hbm, scalars, 2);
    m_system->core(p).load(images_of[static_cast<size_t>(p)]->program,
                           decoded_of[static_cast<size_t>(p)], static_cast<uint32_t>(p));
  });
  // Counters before the step.
  const int64_t start_ps = m_system->end_ps();
  const system::GroupTiming t0 = m_system->groups().front();
  std::vector<int64_t> cyc0, wait0;
  for (int p = 0; p < procs; ++p) {
    const bool local = m_system->is_local(p);
    cyc0.push_back(local ? m_system->core(p).cycles() : 0);
    wait0.push_back(local ? m_system->core(p).stall_cycles(core::StallCause::Exchange) : 0);
  }
  const fabric::FabricStats f0 = m_system->fabric(0).stats();
  m_system->run();
  // Totals.
  const system::GroupTiming& t1 = m_system->groups().front();
  const fabric::FabricStats& f1 = m_system->fabric(0).stats();
  DataParallelTotals& tot = m_totals;
  ++tot.steps;
  tot.samples += n;
  tot.supersteps += t1.supersteps;
  tot.wall_ps += m_system->end_ps() - start_ps;
  int64_t compute = 0;
  for (int p = 0; p < procs; ++p) {
    if (!m_system->is_local(p)) continue;
    const core::Core& c = m_system->core(p);
    const int64_t busy =
        (c.cycles() - cyc0[static_cast<size_t>(p)]) -
        (c.stall_cycles(core::StallCause::Exchange) - wait0[static_cast<size_t>(p)]);
    compute = std::max(compute, m_system->cycles_to_ps(busy));
  }
  tot.compute_ps += system::allreduce_max(m_system->communicator(), compute);
  tot.exchange_ps += (t1.exchange_ps - t0.exchange_ps) + (t1.barrier_ps - t0.barrier_ps);
  tot.exchange_bytes += t1.bytes - t0.bytes;
  tot.link_busy_ps.resize(f1.links.size(), 0);
  for (size_t l = 0; l < f1.links.size(); ++l) {
    const fabric::LinkStats before = l < f0.links.size() ? f0.links[l] : fabric::LinkStats{};
    tot.link_busy_ps[l] += f1.links[l].busy_ps - before.busy_ps;
    tot.wire_bytes += f1.links[l].wire_bytes - before.wire_bytes;
    tot.retransmissions += f1.links[l].retransmissions - before.retransmissions;
  }
  tot.packets += f1.packets - f0.packets;
  const int64_t most = *std::max_element(chip_bytes.begin(), chip_bytes.end());
  for (int64_t b : chip_bytes) tot.host_bytes += b;
  tot.host_link_seconds += static_cast<double>(most) / m_options.trainer.host_bytes_per_second;
  if (m_options.check_replicas) check_replicas();
  double loss = 0;
  for (int p = 0; p < procs; ++p) {
    const compiler::CompiledProgram& prog = program(shards[static_cast<size_t>(p)].second);
    const compiler::HbmTensor loss_word{"loss", prog.loss.hbm, 1};
    loss += static_cast<double>(read_on_every_rank(*m_system, p, {loss_word})[0][0]) *
            shards[static_cast<size_t>(p)].second;
  }
  return loss / n;
}

std::vector<std::vector<float>> DataParallelTrainer::params(int p) const {
  return read_on_every_rank(*m_system, p, layout().params);
}

Tensors DataParallelTrainer::model_state() const {
  return read_on_every_rank(*m_system, 0, layout().model_state);
}

std::vector<int> DataParallelTrainer::diverged_replicas() const {
  const compiler::CompiledProgram& prog = *m_programs.begin()->second;
  const int64_t first = prog.params.front().hbm;
  const int64_t words = prog.params.back().hbm + prog.params.back().words - first;
  return diverged([&](const core::Core& c) {
    std::vector<uint32_t> w(static_cast<size_t>(words));
    c.state().hbm.read_block(first, w.data(), words);
    return w;
  });
}

std::vector<int> DataParallelTrainer::diverged(
    const std::function<std::vector<uint32_t>(const core::Core&)>& words) const {
  const system::Bytes ref = m_system->from_processor(0, [&](const core::Core& c) {
    const std::vector<uint32_t> w = words(c);
    system::Bytes b(4 * w.size());
    if (!w.empty()) std::memcpy(b.data(), w.data(), b.size());
    return b;
  });
  std::vector<int32_t> mine;  // this rank's diverged processors
  for (int p = 1; p < processors(); ++p) {
    if (!m_system->is_local(p)) continue;
    const std::vector<uint32_t> other = words(m_system->core(p));
    if (4 * other.size() != ref.size() ||
        (!other.empty() && std::memcmp(other.data(), ref.data(), ref.size()) != 0))
      mine.push_back(p);
  }
  system::Bytes bytes(4 * mine.size());
  if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<int> out;  // in processor order: ranks hold ascending blocks
  for (const system::Bytes& b : m_system->communicator().allgather(bytes))
    for (size_t i = 0; i + 4 <= b.size(); i += 4) {
      int32_t p = 0;
      std::memcpy(&p, b.data() + i, 4);
      out.push_back(p);
    }
  return out;
}

void DataParallelTrainer::check_replicas() const {
  const std::vector<int> bad = diverged_replicas();
  if (!bad.empty())
    throw Error("data-parallel",
                fmt::format("after step {}: the weights of processor {} differ from processor 0's",
                            m_steps, bad.front()));
}

double DataParallelTrainer::single_core_step_seconds(int shard, const float* images,
                                                     const int32_t* labels) {
  return single_core(shard, images, labels);
}

double DataParallelTrainer::single_core_step_seconds(int shard, const int32_t* ids,
                                                     const int32_t* labels) {
  return single_core(shard, ids, labels);
}

template <class X>
double DataParallelTrainer::single_core(int shard, const X* x, const int32_t* labels) {
  auto it = m_single_core.find(shard);
  if (it != m_single_core.end()) return it->second;
  const int64_t before = m_eval->core().cycles();
  m_eval->step(x, labels, shard);
  const double s = static_cast<double>(m_eval->core().cycles() - before) / m_spec.clock_hz;
  m_single_core[shard] = s;
  return s;
}

}  // namespace tessera::runtime
