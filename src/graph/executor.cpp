#include "graph/executor.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "common/error.h"
#include "graph/batch_norm_kernels.h"
#include "graph/chip_unary.h"
#include "graph/elementwise_kernels.h"
#include "graph/embedding_bag_kernels.h"
#include "graph/transformer_kernels.h"

namespace tessera::graph {

namespace {

std::string value_where(const Value& v) {
  return "value '" + v.name + "'";
}

kernels::ConvGeom conv_geom(const Shape& x, const Shape& w, const Shape& y, const Attrs& a) {
  return {static_cast<int>(x[0]),
          static_cast<int>(x[1]),
          static_cast<int>(x[2]),
          static_cast<int>(x[3]),
          static_cast<int>(w[0]),
          static_cast<int>(w[1]),
          static_cast<int>(w[3]),
          a.stride,
          a.pad,
          static_cast<int>(y[1]),
          static_cast<int>(y[2])};
}

kernels::ConvGeom pool_geom(const Shape& x, const Shape& y, const Attrs& a) {
  return {static_cast<int>(x[0]),
          static_cast<int>(x[1]),
          static_cast<int>(x[2]),
          static_cast<int>(x[3]),
          a.kernel,
          a.kernel,
          static_cast<int>(x[3]),
          a.stride,
          0,
          static_cast<int>(y[1]),
          static_cast<int>(y[2])};
}

}  // namespace

template <typename T>
Executor<T>::Executor(const Graph& g, Numerics mode, bool use_blas)
    : m_graph(g),
      m_mode(mode),
      m_matmul{mode, use_blas},
      m_values(g.values().size()),
      m_labels(g.values().size()),
      m_bound(g.values().size(), false) {
  constexpr bool kIsDouble = std::is_same_v<T, double>;
  TESSERA_CHECK((mode == Numerics::kF64) == kIsDouble,
                "Executor<double> runs kF64; Executor<float> runs kF32 and kChip");
  g.verify();
  for (const Value& v : g.values())
    if (v.kind == ValueKind::kConst) {
      m_values[v.id].assign(v.data->begin(), v.data->end());
      m_bound[v.id] = true;
    }
}

template <typename T>
void Executor<T>::set(int value, std::vector<T> data) {
  const Value& v = m_graph.value(value);
  if (v.kind == ValueKind::kNode || v.kind == ValueKind::kConst || v.dtype != DType::kF32)
    throw Error(value_where(v), "only f32 inputs and parameters can be bound with set()");
  if (static_cast<int64_t>(data.size()) != num_elements(v.shape))
    throw Error(value_where(v), "bound " + std::to_string(data.size()) + " elements, shape " +
                                    shape_str(v.shape) + " needs " +
                                    std::to_string(num_elements(v.shape)));
  m_values[value] = std::move(data);
  m_bound[value] = true;
}

template <typename T>
void Executor<T>::set_labels(int value, std::vector<int32_t> labels) {
  const Value& v = m_graph.value(value);
  if (v.kind != ValueKind::kInput || v.dtype != DType::kI32)
    throw Error(value_where(v), "only i32 inputs can be bound with set_labels()");
  if (static_cast<int64_t>(labels.size()) != num_elements(v.shape))
    throw Error(value_where(v), "bound " + std::to_string(labels.size()) + " labels, shape " +
                                    shape_str(v.shape) + " needs " +
                                    std::to_string(num_elements(v.shape)));
  m_labels[value] = std::move(labels);
  m_bound[value] = true;
}

template <typename T>
const std::vector<T>& Executor<T>::get(int value) const {
  const Value& v = m_graph.value(value);
  if (v.dtype != DType::kF32) throw Error(value_where(v), "is i32; get() reads f32 values");
  return m_values[value];
}

template <typename T>
std::vector<T>& Executor<T>::at(int value) {
  const Value& v = m_graph.value(value);
  if (v.dtype != DType::kF32) throw Error(value_where(v), "is i32; at() reads f32 values");
  return m_values[value];
}

template <typename T>
void Executor<T>::run() {
  for (const Value& v : m_graph.values())
    if (v.kind != ValueKind::kNode && !m_bound[v.id]) throw Error(value_where(v), "is not bound");
  for (const Node& n : m_graph.nodes()) run_node(n);
}

template <typename T>
void Executor<T>::run_node(const Node& n) {
  const Value& out_v = m_graph.value(n.output);
  std::vector<T>& out = m_values[n.output];
  auto in = [&](int i) -> const std::vector<T>& { return m_values[n.inputs[i]]; };
  auto shape = [&](int i) -> const Shape& { return m_graph.value(n.inputs[i]).shape; };
  auto labels = [&](int i) -> const std::vector<int32_t>& { return m_labels[n.inputs[i]]; };
  if (out_v.dtype == DType::kI32) {  // reshape of labels
    m_labels[n.output] = labels(0);
    return;
  }
  out.resize(static_cast<size_t>(num_elements(out_v.shape)));  // every kernel writes all of it
  const long size = static_cast<long>(out.size());
  switch (n.op) {
    case OpKind::kMatMul:
      m_matmul(in(0).data(), in(1).data(), out.data(), static_cast<int>(shape(0)[0]),
               static_cast<int>(shape(0)[1]), static_cast<int>(shape(1)[1]));
      return;
    case OpKind::kAdd:
      kernels::add_broadcast(in(0).data(), in(1).data(), out.data(), size,
                             static_cast<long>(in(1).size()));
      return;
    case OpKind::kRelu:
      kernels::relu(in(0).data(), out.data(), size, m_mode);
      return;
    case OpKind::kReluGrad:
      kernels::relu_grad(in(0).data(), in(1).data(), out.data(), size);
      return;
    case OpKind::kSoftmaxCrossEntropy:
      kernels::softmax_xent(in(0).data(), labels(1).data(), out.data(),
                            static_cast<int>(shape(0)[0]), static_cast<int>(shape(0)[1]), m_mode);
      return;
    case OpKind::kSoftmaxCrossEntropyGrad:
      kernels::softmax_xent_grad(in(0).data(), labels(1).data(), in(2)[0], out.data(),
                                 static_cast<int>(shape(0)[0]), static_cast<int>(shape(0)[1]),
                                 m_mode);
      return;
    case OpKind::kConv2D:
      kernels::conv2d(in(0).data(), in(1).data(), out.data(),
                      conv_geom(shape(0), shape(1), out_v.shape, n.attrs), m_matmul);
      return;
    case OpKind::kConv2DInputGrad:
      kernels::conv2d_input_grad(in(0).data(), in(1).data(), out.data(),
                                 conv_geom(out_v.shape, shape(1), shape(0), n.attrs), m_matmul);
      return;
    case OpKind::kConv2DWeightGrad:
      kernels::conv2d_weight_grad(in(0).data(), in(1).data(), out.data(),
                                  conv_geom(shape(0), out_v.shape, shape(1), n.attrs), m_matmul);
      return;
    case OpKind::kMaxPool2D:
      kernels::maxpool2d(in(0).data(), out.data(), pool_geom(shape(0), out_v.shape, n.attrs));
      return;
    case OpKind::kMaxPool2DGrad:
      kernels::maxpool2d_grad(in(0).data(), in(1).data(), out.data(),
                              pool_geom(shape(1), shape(0), n.attrs));
      return;
    case OpKind::kReshape:
      out = in(0);
      return;
    case OpKind::kTranspose:
      kernels::transpose(in(0).data(), out.data(), static_cast<int>(shape(0)[0]),
                         static_cast<int>(shape(0)[1]));
      return;
    case OpKind::kReduceRows: {
      const int cols = static_cast<int>(out_v.shape[0]);
      kernels::reduce_rows(in(0).data(), out.data(), static_cast<long>(in(0).size()) / cols, cols,
                           m_mode);
      return;
    }
    case OpKind::kOnesLike:
      out.assign(out.size(), T(1));
      return;
    default:
      run_transformer_node(n);
      return;
  }
}

template <typename T>
void Executor<T>::run_transformer_node(const Node& n) {
  const Shape& y = m_graph.value(n.output).shape;
  std::vector<T>& out = m_values[n.output];
  auto in = [&](int i) -> const std::vector<T>& { return m_values[n.inputs[i]]; };
  auto shape = [&](int i) -> const Shape& { return m_graph.value(n.inputs[i]).shape; };
  auto ids = [&](int i) -> const std::vector<int32_t>& { return m_labels[n.inputs[i]]; };
  const long size = static_cast<long>(out.size());
  const int last = y.empty() ? 1 : static_cast<int>(y.back());
  const Attrs& a = n.attrs;
  switch (n.op) {
    case OpKind::kEmbedding:
      kernels::embedding(in(0).data(), ids(1).data(), out.data(), static_cast<long>(ids(1).size()),
                         static_cast<int>(shape(0)[0]), last);
      return;
    case OpKind::kEmbeddingGrad:
      kernels::embedding_grad(in(0).data(), ids(1).data(), out.data(),
                              static_cast<long>(ids(1).size()), static_cast<int>(y[0]), last);
      return;
    case OpKind::kEmbeddingBag:
    case OpKind::kEmbeddingBagGrad: {
      const bool grad = n.op == OpKind::kEmbeddingBagGrad;
      const int first = grad ? 1 : 0;  // ids, then offsets
      const Shape& table = grad ? y : shape(2);
      const kernels::BagShape bags{
          ids(first).data(),           static_cast<long>(ids(first).size()),
          ids(first + 1).data(),       static_cast<long>(ids(first + 1).size()) - 1,
          static_cast<long>(table[0]), static_cast<int>(table[1])};
      if (grad)
        kernels::embedding_bag_grad(bags, in(0).data(), out.data(), a.combiner);
      else
        kernels::embedding_bag(bags, in(2).data(), out.data(), a.combiner);
      return;
    }
    case OpKind::kLayerNorm:
      kernels::layer_norm(in(0).data(), in(1).data(), in(2).data(), out.data(), size / last, last,
                          a.eps, m_mode);
      return;
    case OpKind::kLayerNormGrad:
      kernels::layer_norm_grad(in(0).data(), in(1).data(), in(2).data(), out.data(), size / last,
                               last, a.eps, m_mode);
      return;
    case OpKind::kLayerNormGainGrad:
      kernels::layer_norm_gain_grad(in(0).data(), in(1).data(), out.data(),
                                    static_cast<long>(in(0).size()) / last, last, a.eps, m_mode);
      return;
    case OpKind::kGelu:
      kernels::gelu(in(0).data(), out.data(), size, m_mode);
      return;
    case OpKind::kGeluGrad:
      kernels::gelu_grad(in(0).data(), in(1).data(), out.data(), size, m_mode);
      return;
    case OpKind::kSoftmax: {
      const int rows = y.size() >= 2 ? static_cast<int>(y[y.size() - 2]) : 1;
      kernels::softmax(in(0).data(), out.data(), size / (static_cast<long>(rows) * last), rows,
                       last, a.causal, m_mode);
      return;
    }
    case OpKind::kSoftmaxGrad:
      kernels::softmax_grad(in(0).data(), in(1).data(), out.data(), size / last, last, m_mode);
      return;
    case OpKind::kBatchMatMul: {
      const size_t r = y.size();
      const int M = static_cast<int>(y[r - 2]), N = static_cast<int>(y[r - 1]);
      const int K = static_cast<int>(a.transpose_a ? shape(0)[r - 2] : shape(0)[r - 1]);
      kernels::batch_matmul(in(0).data(), in(1).data(), out.data(),
                            size / (static_cast<long>(M) * N), M, K, N, a.transpose_a,
                            a.transpose_b, m_matmul);
      return;
    }
    case OpKind::kPermute:
      kernels::permute(in(0).data(), out.data(), shape(0), a.perm);
      return;
    case OpKind::kMul:
      kernels::mul_broadcast(in(0).data(), in(1).data(), out.data(), size,
                             static_cast<long>(in(1).size()));
      return;
    case OpKind::kScale:
      kernels::scale(in(0).data(), out.data(), size, a.scale);
      return;
    case OpKind::kDropout:
      kernels::dropout(in(0).data(), out.data(), size, a.rate, a.seed);
      return;
    case OpKind::kSelect:
      std::copy_n(in(0).begin() + a.index * size, size, out.begin());
      return;
    case OpKind::kBatchNorm:
      kernels::batch_norm(in(0).data(), in(1).data(), in(2).data(), in(3).data(), in(4).data(),
                          out.data(), size / last, last);
      return;
    case OpKind::kChannelSquares:
      kernels::channel_squares(in(0).data(), in(1).data(), out.data(),
                               static_cast<long>(in(0).size()) / last, last, m_mode);
      return;
    case OpKind::kChannelDot:
      kernels::channel_dot(in(0).data(), in(1).data(), in(2).data(), out.data(),
                           static_cast<long>(in(0).size()) / last, last, m_mode);
      return;
    case OpKind::kBatchNormGrad:
      kernels::batch_norm_grad(in(0).data(), in(1).data(), in(2).data(), in(3).data(), in(4).data(),
                               in(5).data(), out.data(), size / last, last);
      return;
    case OpKind::kSelectGrad:
      std::fill(out.begin(), out.end(), T(0));
      std::copy(in(0).begin(), in(0).end(),
                out.begin() + a.index * static_cast<long>(in(0).size()));
      return;
    default:
      run_elementwise_node(n);
      return;
  }
}

template <typename T>
void Executor<T>::run_elementwise_node(const Node& n) {
  std::vector<T>& out = m_values[n.output];
  const std::vector<T>& x = m_values[n.inputs[0]];
  const Shape& xs = m_graph.value(n.inputs[0]).shape;
  if (is_unary_elementwise(n.op)) {
    if constexpr (std::is_same_v<T, float>)
      if (m_mode == Numerics::kChip) {
        kernels::chip_unary(n.op, x.data(), out.data(), static_cast<long>(out.size()));
        return;
      }
    kernels::unary(n.op, x.data(), out.data(), static_cast<long>(out.size()));
    return;
  }
  switch (n.op) {
    case OpKind::kBroadcast:
      kernels::broadcast(x.data(), out.data(), xs, n.attrs.shape);
      return;
    case OpKind::kSumTo:
      kernels::sum_to(x.data(), out.data(), xs, n.attrs.shape);
      return;
    case OpKind::kSlice:
      kernels::slice(x.data(), out.data(), xs, n.attrs.starts, n.attrs.steps, n.attrs.shape);
      return;
    case OpKind::kSliceGrad:
      kernels::slice_grad(x.data(), out.data(), n.attrs.x_shape, n.attrs.starts, n.attrs.steps,
                          n.attrs.shape);
      return;
    case OpKind::kConcat:
      kernels::concat(x.data(), m_values[n.inputs[1]].data(), out.data(), xs,
                      m_graph.value(n.inputs[1]).shape, n.attrs.axis);
      return;
    case OpKind::kPad:
      kernels::pad(x.data(), out.data(), xs, n.attrs.starts, n.attrs.shape,
                   static_cast<T>(n.attrs.fill));
      return;
    case OpKind::kReduceMax:
      kernels::reduce_max(x.data(), out.data(), xs, n.attrs.shape);
      return;
    case OpKind::kReduceMaxGrad:  // dy, x, y
      kernels::reduce_max_grad(x.data(), m_values[n.inputs[1]].data(), m_values[n.inputs[2]].data(),
                               out.data(), m_graph.value(n.inputs[1]).shape, xs);
      return;
    default:
      TESSERA_CHECK(false, "executor: op " + std::string(op_name(n.op)) + " has no kernel");
  }
}

template class Executor<float>;
template class Executor<double>;

}  // namespace tessera::graph
