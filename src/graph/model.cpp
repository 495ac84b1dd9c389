#include "graph/model.h"

#include <cmath>
#include <optional>

#include "common/error.h"
#include "common/splitmix64.h"

namespace tessera::graph {

const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::kDense:
      return "dense";
    case LayerKind::kConv2D:
      return "conv2d";
    case LayerKind::kRelu:
      return "relu";
    case LayerKind::kMaxPool2D:
      return "maxpool2d";
    case LayerKind::kFlatten:
      return "flatten";
  }
  return "?";
}

namespace {

class Builder {
 public:
  Builder(const ModelSpec& spec, int batch) : m_spec(spec) {
    m_model.name = spec.name;
    m_model.batch = batch;
    Shape x{batch};
    x.insert(x.end(), spec.input.begin(), spec.input.end());
    m_cur = m_model.graph.add_input("x", x);
    m_model.input = m_cur;
    m_model.labels = m_model.graph.add_input("labels", {batch}, DType::kI32);
  }

  void layer(const LayerSpec& l, int index) {
    switch (l.kind) {
      case LayerKind::kDense:
        dense(l);
        break;
      case LayerKind::kConv2D:
        conv(l);
        break;
      case LayerKind::kRelu:
        m_cur = g().add_node(OpKind::kRelu, {m_cur}, {}, "relu" + std::to_string(index));
        break;
      case LayerKind::kMaxPool2D: {
        const int stride = l.stride > 0 ? l.stride : l.kernel;
        m_cur = g().add_node(OpKind::kMaxPool2D, {m_cur}, Attrs::pool(l.kernel, stride),
                             "pool" + std::to_string(index));
        break;
      }
      case LayerKind::kFlatten: {
        const Shape& s = shape();
        m_cur =
            g().add_node(OpKind::kReshape, {m_cur}, Attrs::reshape({s[0], num_elements(s) / s[0]}),
                         "flatten" + std::to_string(index));
        break;
      }
    }
  }

  Model finish() {
    const Shape want{m_model.batch, m_spec.classes};
    if (shape() != want)
      throw Error("model '" + m_spec.name + "'", "the last layer's output " + shape_str(shape()) +
                                                     " must be the logits " + shape_str(want));
    m_model.logits = m_cur;
    m_model.loss = g().add_node(OpKind::kSoftmaxCrossEntropy, {m_cur, m_model.labels}, {}, "loss");
    m_model.params = g().params();
    g().verify();
    return std::move(m_model);
  }

 private:
  Graph& g() { return m_model.graph; }
  const Shape& shape() { return g().value(m_cur).shape; }

  int param(const std::string& name, Shape s, int64_t fan_in) {
    m_model.fan_in.push_back(fan_in);
    return g().add_param(name, std::move(s));
  }

  void dense(const LayerSpec& l) {
    if (shape().size() != 2)
      throw Error("", "needs a flat input [batch, features], got " + shape_str(shape()) +
                          " (add a flatten layer)");
    if (l.units < 1) throw Error("", "units must be >= 1, got " + std::to_string(l.units));
    const std::string name = "dense" + std::to_string(++m_dense);
    const int64_t in = shape()[1];
    const int w = param(name + ".w", {in, l.units}, in);
    const int b = param(name + ".b", {l.units}, in);
    const int mm = g().add_node(OpKind::kMatMul, {m_cur, w}, {}, name + ".matmul");
    m_cur = g().add_node(OpKind::kAdd, {mm, b}, {}, name);
  }

  void conv(const LayerSpec& l) {
    if (shape().size() != 4)
      throw Error(
          "", "needs an NHWC input [batch, height, width, channels], got " + shape_str(shape()));
    if (l.units < 1 || l.kernel < 1)
      throw Error("", "filters and kernel must be >= 1, got filters " + std::to_string(l.units) +
                          " kernel " + std::to_string(l.kernel));
    const std::string name = "conv" + std::to_string(++m_conv);
    const int64_t ci = shape()[3];
    const int64_t fan_in = ci * l.kernel * l.kernel;
    const int w = param(name + ".w", {l.kernel, l.kernel, ci, l.units}, fan_in);
    const int b = param(name + ".b", {l.units}, fan_in);
    const int c =
        g().add_node(OpKind::kConv2D, {m_cur, w}, Attrs::conv(l.stride, l.pad), name + ".conv");
    m_cur = g().add_node(OpKind::kAdd, {c, b}, {}, name);
  }

  const ModelSpec& m_spec;
  Model m_model;
  int m_cur = -1;
  int m_dense = 0, m_conv = 0;
};

}  // namespace

Model build_model(const ModelSpec& spec, int batch) {
  if (batch < 1)
    throw Error("model '" + spec.name + "'", "batch must be >= 1, got " + std::to_string(batch));
  if (spec.input.empty()) throw Error("model '" + spec.name + "'", "input shape is empty");
  if (spec.classes < 2) throw Error("model '" + spec.name + "'", "classes must be >= 2");
  std::optional<Builder> built;
  try {
    built.emplace(spec, batch);
  } catch (const Error& e) {
    throw Error("model '" + spec.name + "': input", e.what());
  }
  Builder& b = *built;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    try {
      b.layer(l, static_cast<int>(i));
    } catch (const Error& e) {
      const std::string where = "model '" + spec.name + "': layer " + std::to_string(i) + " (" +
                                layer_kind_name(l.kind) + ")";
      throw Error(where, e.where().empty() ? e.why() : e.what());
    }
  }
  return b.finish();
}

std::vector<std::string> zoo_names() {
  return {"mlp", "cnn", "cnn_small"};
}

ModelSpec zoo_spec(const std::string& name) {
  const LayerSpec relu{LayerKind::kRelu};
  auto dense = [](int units) { return LayerSpec{LayerKind::kDense, units}; };
  auto conv5 = [](int filters) { return LayerSpec{LayerKind::kConv2D, filters, 5, 1, 2}; };
  const LayerSpec pool{LayerKind::kMaxPool2D, 0, 2, 2, 0};
  const LayerSpec flatten{LayerKind::kFlatten};
  if (name == "mlp") return {"mlp", {784}, 10, {dense(256), relu, dense(128), relu, dense(10)}};
  if (name == "cnn")
    return {
        "cnn", {28, 28, 1}, 10, {conv5(32), relu, pool, conv5(64), relu, pool, flatten, dense(10)}};
  if (name == "cnn_small")
    return {"cnn_small",
            {28, 28, 1},
            10,
            {conv5(4), relu, pool, conv5(8), relu, pool, flatten, dense(10)}};
  std::string known;
  for (const std::string& n : zoo_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("model zoo", "unknown model '" + name + "' (known: " + known + ")");
}

void finish_with_loss(Model& m) {
  m.loss = m.graph.add_node(OpKind::kSoftmaxCrossEntropy, {m.logits, m.labels}, {}, "loss");
  m.params = m.graph.params();
  m.fan_in.assign(m.params.size(), 1);
  m.graph.verify();
}

std::vector<std::vector<float>> init_params(const Model& m, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(m.fan_in[i]));
    std::vector<float> p(static_cast<size_t>(num_elements(m.graph.value(m.params[i]).shape)));
    for (float& x : p) x = static_cast<float>((2.0 * rng.unit() - 1.0) * bound);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tessera::graph
