// Pass plan-hbm: assigns every value of the graph an HBM word address.
//   * Persistent (the host reads or writes them between runs): the input batch x, the labels, the
//     per-step optimizer scalars, the constant 1.0 (the loss seed), the graph's constants (both
//     written by the program's data segments), the parameters and the optimizer state, the loss
//     (and logits in inference), the sparse core's buffers of an embedding_bag (plan_sparse_step),
//     the model's state (batch normalisation's running averages; plan_model_state), whose updates
//     are computed in place.
//   * Transient: every other node output lives from its producing node to its last consumer
//     (gradients to the end: the optimizer update reads them). Values are placed first-fit in a
//     free list in node order and their space is reused once their last consumer has run (never by
//     an output of that same consumer: kernels read inputs while they write outputs). A reshape's
//     output aliases its input's words (no copy).
// The peak is checked against the configured HBM; a model that does not fit is an Error naming the
// value that did not fit and the sizes.
#include <algorithm>
#include <sstream>

#include "common/error.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

namespace {

int64_t words_of(const graph::Value& v) {
  return std::max<int64_t>(1, graph::num_elements(v.shape));
}

class FreeList {
 public:
  explicit FreeList(int64_t base) : m_end(base) {}
  int64_t alloc(int64_t n) {
    for (auto it = m_free.begin(); it != m_free.end(); ++it)
      if (it->second >= n) {
        const int64_t at = it->first;
        const int64_t rest = it->second - n;
        m_free.erase(it);
        if (rest > 0) m_free.emplace(at + n, rest);
        return at;
      }
    const int64_t at = m_end;
    m_end += n;
    return at;
  }
  void release(int64_t at, int64_t n) {
    auto [it, ok] = m_free.emplace(at, n);
    TESSERA_CHECK(ok, "plan-hbm: double free");
    auto next = std::next(it);
    if (next != m_free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      m_free.erase(next);
    }
    if (it != m_free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        m_free.erase(it);
      }
    }
  }
  int64_t end() const { return m_end; }

 private:
  std::map<int64_t, int64_t> m_free;
  int64_t m_end;
};

// Adam on the unit: the gradients become persistent, one contiguous g at the parameters' offsets
// (the parameters are contiguous from their first word), then the unit's programs and
// hyperparameter block; the state tensors (m's then v's, contiguous) are its spill area.
template <class Alloc>
void plan_adam_unit(Pipeline& p, Alloc& persistent) {
  CompiledProgram& out = p.out;
  AdamUnitPlan& u = out.adam_unit;
  u.used = true;
  u.theta = out.params.front().hbm;
  u.n = out.params.back().hbm + out.params.back().words - u.theta;
  u.spill = out.state.front().hbm;
  u.g = persistent(u.n);
  for (size_t i = 0; i < p.grads.size(); ++i)
    p.hbm[p.grads[i]] = u.g + (out.params[i].hbm - u.theta);
  u.step_program = persistent(kAdamUnitProgramWords);
  u.init_program = persistent(kAdamUnitProgramWords);
  u.hyper = persistent(kAdamUnitHyperWords);
  u.flag = kAdamUnitFlag;
}

// The model's state after the optimizer state (so its addresses, like theirs, depend on neither
// the batch nor training vs inference). Each update is computed into its value's words: the
// update's node must run after every reader of the value (a reshape of it included) and not read
// it itself, as kernels read their inputs while they write their outputs.
template <class Tensor>
void plan_model_state(Pipeline& p, Tensor& tensor) {
  const graph::Graph& g = p.graph;
  CompiledProgram& out = p.out;
  out.model_state.clear();
  for (size_t i = 0; i < p.state.size(); ++i) {
    const graph::Value& v = g.value(p.state[i]);
    out.model_state.push_back(tensor(v.name, words_of(v)));
    p.hbm[p.state[i]] = out.model_state.back().hbm;
  }
  std::map<int, int> root;  // a reshape of a state value -> the state value
  std::map<int, int> last_read;
  for (int id : p.state) root[id] = id;
  const auto& nodes = g.nodes();
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const graph::Node& n = nodes[static_cast<size_t>(i)];
    for (int in : n.inputs)
      if (root.count(in)) last_read[root.at(in)] = i;
    if (n.op == graph::OpKind::kReshape && root.count(n.inputs[0]))
      root[n.output] = root.at(n.inputs[0]);
  }
  for (size_t i = 0; i < p.state.size(); ++i) {
    const int update = p.state_updates[i];
    if (update < 0) continue;
    const graph::Value& u = g.value(update);
    const int at = u.producer;
    const auto read = last_read.find(p.state[i]);
    if (at < 0 || g.node(at).op == graph::OpKind::kReshape ||
        (read != last_read.end() && read->second >= at) ||
        words_of(u) != words_of(g.value(p.state[i])))
      throw Error("compiler", "state '" + g.value(p.state[i]).name + "': its update '" + u.name +
                                  "' cannot be computed in place (it must be a node of the same "
                                  "size that runs after every reader of the value)");
    p.hbm[update] = p.hbm.at(p.state[i]);
  }
}

}  // namespace

void pass_plan_hbm(Pipeline& p) {
  const graph::Graph& g = p.graph;
  int64_t next = 0;
  auto persistent = [&](int64_t words) {
    const int64_t at = next;
    next += words;
    return at;
  };
  auto tensor = [&](const std::string& name, int64_t words) {
    return HbmTensor{name, persistent(words), words};
  };
  // Parameters and optimizer state first: their addresses do not depend on the batch, so the
  // training programs of every batch size and the inference programs share them.
  CompiledProgram& out = p.out;
  out.params.clear();
  for (int id : p.params) {
    out.params.push_back(tensor(g.value(id).name, words_of(g.value(id))));
    p.hbm[id] = out.params.back().hbm;
  }
  out.state.clear();
  const int copies = p.options.optimizer.kind == graph::OptimizerKind::kAdam ? 2 : 1;
  for (int c = 0; c < copies; ++c)
    for (size_t i = 0; i < p.params.size(); ++i)
      out.state.push_back(
          tensor((copies == 2 ? (c == 0 ? "adam.m." : "adam.v.")
                  : p.options.optimizer.kind == graph::OptimizerKind::kAdagrad ? "adagrad.sum."
                                                                               : "sgd.vel.") +
                     out.params[i].name,
                 out.params[i].words));
  plan_model_state(p, tensor);
  const int64_t theta = out.params.empty() ? 0 : out.params.front().hbm;
  const int64_t n_params =
      out.params.empty() ? 0 : out.params.back().hbm + out.params.back().words - theta;
  if (copies == 2 && p.options.adam_on == AdamOn::kUnit && n_params > 0) {
    plan_adam_unit(p, persistent);
    out.grads = HbmTensor{"grads", out.adam_unit.g, n_params};
  } else if (p.options.persistent_grads && p.options.training && n_params > 0) {
    out.grads = HbmTensor{"grads", persistent(n_params), n_params};
    for (size_t i = 0; i < p.grads.size(); ++i)
      p.hbm[p.grads[i]] = out.grads.hbm + (out.params[i].hbm - theta);
  }
  out.scalars = tensor("optimizer.scalars", 2);
  p.ones_hbm = persistent(1);
  out.constants.clear();
  for (int id : g.constants()) {
    out.constants.push_back(tensor(g.value(id).name, words_of(g.value(id))));
    p.hbm[id] = out.constants.back().hbm;
  }
  // An inference-only model (no labels, no loss): loss and labels stay empty (words 0).
  if (p.loss >= 0) out.loss = tensor(g.value(p.loss).name, 1);
  out.x = tensor(g.value(p.x).name, words_of(g.value(p.x)));
  if (p.labels >= 0) out.labels = tensor(g.value(p.labels).name, words_of(g.value(p.labels)));
  out.logits = tensor(g.value(p.logits).name, p.options.training ? 0 : words_of(g.value(p.logits)));
  p.hbm[p.x] = out.x.hbm;
  if (p.labels >= 0) p.hbm[p.labels] = out.labels.hbm;
  if (p.loss >= 0) p.hbm[p.loss] = out.loss.hbm;
  if (!p.options.training) p.hbm[p.logits] = out.logits.hbm;
  plan_sparse_step(p, next);
  if (next * 4 > p.spec->hbm_bytes)
    throw Error("compiler", "parameters and optimizer state need " + std::to_string(next * 4) +
                                " bytes of HBM, the core has " + std::to_string(p.spec->hbm_bytes));
  // Live ranges of the transient values. A reshape's output (same words, same row-major order)
  // aliases its input: it gets no space of its own and its uses extend the input's live range.
  const int n = static_cast<int>(g.nodes().size());
  p.live.clear();
  std::map<int, int> alias;  // reshape output -> the value whose words it shares
  auto root = [&](int v) {
    auto it = alias.find(v);
    return it == alias.end() ? v : it->second;
  };
  for (int i = 0; i < n; ++i) {
    const graph::Node& node = g.nodes()[static_cast<size_t>(i)];
    if (node.op == graph::OpKind::kReshape && !p.hbm.count(node.output))
      alias[node.output] = root(node.inputs[0]);
    else if (!p.hbm.count(node.output))
      p.live[node.output] = {i, i};
    for (int in : node.inputs)
      if (p.live.count(root(in))) p.live[root(in)].second = std::max(p.live[root(in)].second, i);
  }
  for (int gr : p.grads)
    if (p.live.count(root(gr))) p.live[root(gr)].second = n;
  FreeList fl(next);
  std::map<int, std::vector<int>> dying;  // node index -> values whose last use it is
  for (const auto& [v, r] : p.live) dying[r.second].push_back(v);
  for (int i = 0; i < n; ++i) {
    const int v = g.nodes()[static_cast<size_t>(i)].output;
    if (p.live.count(v)) {
      p.hbm[v] = fl.alloc(words_of(g.value(v)));
      out.stats.transient_unshared_words += words_of(g.value(v));
    }
    for (int d : dying[i]) fl.release(p.hbm[d], words_of(g.value(d)));
    if (fl.end() * 4 > p.spec->hbm_bytes)
      throw Error("compiler",
                  "value '" + g.value(v).name + "' " + graph::shape_str(g.value(v).shape) +
                      " does not fit HBM: the plan needs " + std::to_string(fl.end() * 4) +
                      " bytes, the core has " + std::to_string(p.spec->hbm_bytes));
  }
  for (const auto& [a, r] : alias) p.hbm[a] = p.hbm.at(r);
  out.stats.hbm_words = fl.end();
  out.stats.transient_words = fl.end() - next;
  verify_plan(p);
}

// Every value a node touches has an address; no two values live at the same time overlap.
void verify_plan(const Pipeline& p) {
  const graph::Graph& g = p.graph;
  for (const graph::Node& node : g.nodes()) {
    for (int in : node.inputs)
      if (!p.hbm.count(in))
        throw Error("plan-hbm", "value '" + g.value(in).name + "' has no HBM address");
    if (!p.hbm.count(node.output))
      throw Error("plan-hbm", "value '" + g.value(node.output).name + "' has no HBM address");
  }
  std::vector<std::pair<int, std::pair<int, int>>> items(p.live.begin(), p.live.end());
  for (size_t a = 0; a < items.size(); ++a)
    for (size_t b = a + 1; b < items.size(); ++b) {
      const auto& [va, ra] = items[a];
      const auto& [vb, rb] = items[b];
      if (ra.second < rb.first || rb.second < ra.first) continue;
      const int64_t a0 = p.hbm.at(va), a1 = a0 + words_of(g.value(va));
      const int64_t b0 = p.hbm.at(vb), b1 = b0 + words_of(g.value(vb));
      if (a0 < b1 && b0 < a1)
        throw Error("plan-hbm", "values '" + g.value(va).name + "' and '" + g.value(vb).name +
                                    "' overlap while both live");
    }
}

std::string dump_plan(const Pipeline& p) {
  std::ostringstream os;
  const graph::Graph& g = p.graph;
  for (const graph::Value& v : g.values()) {
    auto it = p.hbm.find(v.id);
    if (it == p.hbm.end()) continue;
    os << "hbm " << it->second << " +" << words_of(v) << " " << v.name << " "
       << graph::shape_str(v.shape);
    auto l = p.live.find(v.id);
    if (l != p.live.end()) os << " live [" << l->second.first << ", " << l->second.second << "]";
    os << "\n";
  }
  for (const HbmTensor& t : p.out.state)
    os << "hbm " << t.hbm << " +" << t.words << " " << t.name << "\n";
  return os.str();
}

}  // namespace tessera::compiler
