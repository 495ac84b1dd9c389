#include "graph/autodiff.h"

#include <string>

#include "common/error.h"

namespace tessera::graph {

namespace {

class Differentiator {
 public:
  explicit Differentiator(Graph& g)
      : m_g(g), m_grad(g.values().size(), -1), m_needs(g.values().size(), false) {
    for (const Value& v : g.values()) m_needs[v.id] = v.kind == ValueKind::kParam;
    for (const Node& n : g.nodes()) {
      if (n.op == OpKind::kOnesLike) continue;  // constant: no gradient flows through
      for (int in : n.inputs) m_needs[n.output] = m_needs[n.output] || m_needs[in];
    }
  }

  std::vector<int> run(int output, int seed) {
    const size_t forward_nodes = m_g.nodes().size();
    m_grad[output] = seed;
    for (size_t i = forward_nodes; i-- > 0;) {
      const Node n = m_g.node(static_cast<int>(i));  // copy: rules append to the node list
      if (m_grad[n.output] < 0 || !m_needs[n.output]) continue;
      apply_rule(n, m_grad[n.output]);
    }
    std::vector<int> grads;
    for (int p : m_g.params()) grads.push_back(m_grad[p]);
    return grads;
  }

 private:
  int add(OpKind op, std::vector<int> inputs, Attrs attrs = {}) {
    const int v = m_g.add_node(op, std::move(inputs), std::move(attrs));
    m_grad.push_back(-1);
    m_needs.push_back(false);
    return v;
  }

  bool needs(int v) const { return m_needs[v]; }

  // Adds `g` to the gradient of value v.
  void accumulate(int v, int g) {
    m_grad[v] = m_grad[v] < 0 ? g : add(OpKind::kAdd, {m_grad[v], g});
  }

  // Gradient of Add's broadcast operand b: dy summed over the leading dimensions.
  // y = (x - mean) * a + beta, a = gamma * inv_sd, over R rows of C channels, where mean and
  // inv_sd are x's batch statistics (mean = sum(x) / R, inv_sd = 1 / sqrt(var + eps)): with
  // s = sum(dy) and D = sum(dy * (x - mean)) over the rows,
  //   dbeta = s, dgamma = D * inv_sd,
  //   dx = dy * a + (x - mean) * (-a * inv_sd * dgamma / R) + (-a * s / R),
  // the statistics' own gradients folded in (none is propagated to mean or inv_sd).
  void batch_norm_rule(const Node& n, int dy) {
    const int x = n.inputs[0], mean = n.inputs[1], inv_sd = n.inputs[2], gamma = n.inputs[3],
              beta = n.inputs[4];
    const Shape xs = m_g.value(x).shape;  // a copy: adding nodes reallocates the values
    const int64_t C = xs.back();
    const double per_row = -1.0 / static_cast<double>(num_elements(xs) / C);
    const int s = broadcast_grad(dy, {C});
    const int dgamma = add(OpKind::kMul, {add(OpKind::kChannelDot, {dy, x, mean}), inv_sd});
    if (needs(beta)) accumulate(beta, s);
    if (needs(gamma)) accumulate(gamma, dgamma);
    if (!needs(x)) return;
    const int a = add(OpKind::kMul, {gamma, inv_sd});
    const int k_x =
        add(OpKind::kScale, {add(OpKind::kMul, {add(OpKind::kMul, {a, inv_sd}), dgamma})},
            Attrs::scaled(per_row));
    const int k = add(OpKind::kScale, {add(OpKind::kMul, {a, s})}, Attrs::scaled(per_row));
    accumulate(x, add(OpKind::kBatchNormGrad, {dy, x, mean, a, k_x, k}));
  }

  int broadcast_grad(int dy, Shape b) {  // by value: adding nodes reallocates the values
    const Shape a = m_g.value(dy).shape;
    if (a == b) return dy;
    const int64_t nb = num_elements(b);
    int rows = dy;
    if (b.size() != 1)
      rows = add(OpKind::kReshape, {dy}, Attrs::reshape({num_elements(a) / nb, nb}));
    const int sum = add(OpKind::kReduceRows, {rows});
    return b.size() == 1 ? sum : add(OpKind::kReshape, {sum}, Attrs::reshape(b));
  }

  // C = op(A) op(B) with op = identity or transpose (per attrs): each operand's gradient is
  // another batched product of dy with the other operand, e.g. dA = dC B^T when neither is
  // transposed and dA = B dC^T when A is.
  void batch_matmul_rule(const Node& n, int dy) {
    const int a = n.inputs[0], b = n.inputs[1];
    const bool ta = n.attrs.transpose_a, tb = n.attrs.transpose_b;
    auto product = [&](int l, int r, bool tl, bool tr) {
      return add(OpKind::kBatchMatMul, {l, r}, Attrs::batch_matmul(tl, tr));
    };
    if (needs(a)) accumulate(a, ta ? product(b, dy, tb, true) : product(dy, b, false, !tb));
    if (needs(b)) accumulate(b, tb ? product(dy, a, true, ta) : product(a, dy, !ta, false));
  }

  // f'(x) of an elementwise op y = f(x), built from forward ops on x and y:
  //   exp: y; log: 1/x; sqrt: 0.5 * (1/y); reciprocal: -(y*y); sigmoid: y * (1 - y);
  //   tanh: 1 - y*y; erf: 2/sqrt(pi) * exp(-(x*x)).
  int unary_derivative(const Node& n) {
    const int x = n.inputs[0], y = n.output;
    auto one_minus = [&](int v) {
      return add(OpKind::kAdd,
                 {add(OpKind::kOnesLike, {v}), add(OpKind::kScale, {v}, Attrs::scaled(-1))});
    };
    switch (n.op) {
      case OpKind::kExp:
        return y;
      case OpKind::kLog:
        return add(OpKind::kReciprocal, {x});
      case OpKind::kSqrt:
        return add(OpKind::kScale, {add(OpKind::kReciprocal, {y})}, Attrs::scaled(0.5));
      case OpKind::kReciprocal:
        return add(OpKind::kScale, {add(OpKind::kMul, {y, y})}, Attrs::scaled(-1));
      case OpKind::kSigmoid:
        return add(OpKind::kMul, {y, one_minus(y)});
      case OpKind::kTanh:
        return one_minus(add(OpKind::kMul, {y, y}));
      default: {  // erf
        const int sq = add(OpKind::kScale, {add(OpKind::kMul, {x, x})}, Attrs::scaled(-1));
        return add(OpKind::kScale, {add(OpKind::kExp, {sq})}, Attrs::scaled(1.1283791670955126));
      }
    }
  }

  void apply_rule(const Node& n, int dy) {
    const int x = n.inputs[0];
    const int y = n.inputs.size() > 1 ? n.inputs[1] : -1;
    if (is_unary_elementwise(n.op)) {
      accumulate(x, add(OpKind::kMul, {dy, unary_derivative(n)}));
      return;
    }
    switch (n.op) {
      case OpKind::kMatMul:
        if (needs(x)) accumulate(x, add(OpKind::kMatMul, {dy, add(OpKind::kTranspose, {y})}));
        if (needs(y)) accumulate(y, add(OpKind::kMatMul, {add(OpKind::kTranspose, {x}), dy}));
        return;
      case OpKind::kAdd:
        if (needs(x)) accumulate(x, dy);
        if (needs(y)) accumulate(y, broadcast_grad(dy, m_g.value(y).shape));
        return;
      case OpKind::kRelu:
        accumulate(x, add(OpKind::kReluGrad, {dy, x}));
        return;
      case OpKind::kSoftmaxCrossEntropy:
        if (needs(x)) accumulate(x, add(OpKind::kSoftmaxCrossEntropyGrad, {x, y, dy}));
        return;
      case OpKind::kConv2D: {
        const int stride = n.attrs.stride, pad = n.attrs.pad;
        if (needs(x))
          accumulate(x, add(OpKind::kConv2DInputGrad, {dy, y},
                            Attrs::conv(stride, pad, m_g.value(x).shape)));
        if (needs(y))
          accumulate(y, add(OpKind::kConv2DWeightGrad, {x, dy},
                            Attrs::conv(stride, pad, m_g.value(y).shape)));
        return;
      }
      case OpKind::kMaxPool2D:
        accumulate(x, add(OpKind::kMaxPool2DGrad, {dy, x}, n.attrs));
        return;
      case OpKind::kReshape:
        accumulate(x, add(OpKind::kReshape, {dy}, Attrs::reshape(m_g.value(x).shape)));
        return;
      case OpKind::kTranspose:
        accumulate(x, add(OpKind::kTranspose, {dy}));
        return;
      case OpKind::kEmbedding:
        if (needs(x))
          accumulate(x, add(OpKind::kEmbeddingGrad, {dy, y}, Attrs::reshape(m_g.value(x).shape)));
        return;
      case OpKind::kEmbeddingBag: {  // the table's rows only: ids and offsets are integers
        const int table = n.inputs[2];
        if (needs(table))
          accumulate(table, add(OpKind::kEmbeddingBagGrad, {dy, x, y},
                                Attrs::embedding_bag(n.attrs.combiner, m_g.value(table).shape)));
        return;
      }
      case OpKind::kLayerNorm: {
        const int gain = n.inputs[1], bias = n.inputs[2];
        if (needs(x)) accumulate(x, add(OpKind::kLayerNormGrad, {dy, x, gain}, n.attrs));
        if (needs(gain)) accumulate(gain, add(OpKind::kLayerNormGainGrad, {dy, x}, n.attrs));
        if (needs(bias)) accumulate(bias, broadcast_grad(dy, m_g.value(bias).shape));
        return;
      }
      case OpKind::kGelu:
        accumulate(x, add(OpKind::kGeluGrad, {dy, x}));
        return;
      case OpKind::kBatchNorm:
        batch_norm_rule(n, dy);
        return;
      case OpKind::kSoftmax:
        accumulate(x, add(OpKind::kSoftmaxGrad, {dy, n.output}));
        return;
      case OpKind::kBatchMatMul:
        batch_matmul_rule(n, dy);
        return;
      case OpKind::kPermute: {
        Shape inverse(n.attrs.perm.size());
        for (size_t i = 0; i < inverse.size(); ++i)
          inverse[static_cast<size_t>(n.attrs.perm[i])] = static_cast<int64_t>(i);
        accumulate(x, add(OpKind::kPermute, {dy}, Attrs::permute(inverse)));
        return;
      }
      case OpKind::kMul:
        if (needs(x)) accumulate(x, add(OpKind::kMul, {dy, y}));
        if (needs(y)) accumulate(y, broadcast_grad(add(OpKind::kMul, {dy, x}), m_g.value(y).shape));
        return;
      case OpKind::kScale:
      case OpKind::kDropout:  // the same mask and factor: the op is its own adjoint
        accumulate(x, add(n.op, {dy}, n.attrs));
        return;
      case OpKind::kSelect:
        accumulate(
            x, add(OpKind::kSelectGrad, {dy}, Attrs::select(n.attrs.index, m_g.value(x).shape)));
        return;
      case OpKind::kBroadcast:
        accumulate(x, add(OpKind::kSumTo, {dy}, Attrs::reshape(m_g.value(x).shape)));
        return;
      case OpKind::kSumTo:
        accumulate(x, add(OpKind::kBroadcast, {dy}, Attrs::reshape(m_g.value(x).shape)));
        return;
      case OpKind::kSlice:
        accumulate(
            x, add(OpKind::kSliceGrad, {dy},
                   Attrs::slice(n.attrs.shape, n.attrs.starts, n.attrs.steps, m_g.value(x).shape)));
        return;
      case OpKind::kConcat: {  // each operand's gradient: its part of dy
        const Shape a = m_g.value(x).shape, b = m_g.value(y).shape, out = m_g.value(n.output).shape;
        const auto axis = static_cast<size_t>(n.attrs.axis);
        Shape starts(out.size(), 0);
        const Shape steps(out.size(), 1);
        if (needs(x)) accumulate(x, add(OpKind::kSlice, {dy}, Attrs::slice(a, starts, steps)));
        starts[axis] = a[axis];
        if (needs(y)) accumulate(y, add(OpKind::kSlice, {dy}, Attrs::slice(b, starts, steps)));
        return;
      }
      case OpKind::kPad: {
        const Shape xs = m_g.value(x).shape;
        accumulate(
            x, add(OpKind::kSlice, {dy}, Attrs::slice(xs, n.attrs.starts, Shape(xs.size(), 1))));
        return;
      }
      case OpKind::kReduceMax:
        accumulate(x, add(OpKind::kReduceMaxGrad, {dy, x, n.output}));
        return;
      case OpKind::kSliceGrad:
      case OpKind::kReduceMaxGrad:
      case OpKind::kReluGrad:
      case OpKind::kSoftmaxCrossEntropyGrad:
      case OpKind::kEmbeddingGrad:
      case OpKind::kEmbeddingBagGrad:
      case OpKind::kLayerNormGrad:
      case OpKind::kLayerNormGainGrad:
      case OpKind::kChannelSquares:
      case OpKind::kChannelDot:
      case OpKind::kBatchNormGrad:
      case OpKind::kGeluGrad:
      case OpKind::kSoftmaxGrad:
      case OpKind::kSelectGrad:
      case OpKind::kConv2DInputGrad:
      case OpKind::kConv2DWeightGrad:
      case OpKind::kMaxPool2DGrad:
      case OpKind::kReduceRows:
      case OpKind::kOnesLike:
        throw Error("autodiff", std::string(op_name(n.op)) + " (value '" +
                                    m_g.value(n.output).name +
                                    "') is a backward-only op with no gradient rule");
      default:  // the unary element-wise ops are handled above the switch
        TESSERA_CHECK(false, "autodiff: value '" + m_g.value(n.output).name + "' has no rule");
    }
  }

  Graph& m_g;
  std::vector<int> m_grad;
  std::vector<bool> m_needs;
};

}  // namespace

std::vector<int> append_backward(Graph& g, int output, int seed) {
  if (g.value(seed).shape != g.value(output).shape)
    throw Error("autodiff", "seed " + shape_str(g.value(seed).shape) + " does not match output " +
                                shape_str(g.value(output).shape));
  return Differentiator(g).run(output, seed);
}

TrainingGraph build_training_graph(const Graph& forward, int loss) {
  TrainingGraph t{forward, loss, forward.params(), {}};
  if (!forward.value(loss).shape.empty())
    throw Error("autodiff", "loss '" + forward.value(loss).name + "' must be a scalar, got " +
                                shape_str(forward.value(loss).shape));
  const int seed = t.graph.add_node(OpKind::kOnesLike, {loss}, {}, "d.loss");
  t.grads = append_backward(t.graph, loss, seed);
  for (size_t i = 0; i < t.params.size(); ++i)
    if (t.grads[i] < 0)
      throw Error("autodiff",
                  "parameter '" + forward.value(t.params[i]).name + "' does not affect the loss");
  t.graph.verify();
  return t;
}

}  // namespace tessera::graph
