#include "graph/resnet_model.h"

#include <cmath>
#include <limits>
#include <map>

#include "common/error.h"
#include "common/normal_draw.h"
#include "common/splitmix64.h"
#include "graph/batch_norm.h"
#include "graph/zoo_layers.h"

namespace tessera::graph {

namespace {

// How a bn is built: from batch statistics, from the running averages, or folded into constants.
enum class Form : uint8_t { kTrain, kEval, kFolded };

struct StageShape {
  std::vector<int> blocks;
  bool bottleneck = false;
};

StageShape stage_shape(int depth) {
  if (depth == 18) return {{2, 2, 2, 2}, false};
  if (depth == 50) return {{3, 4, 6, 3}, true};
  throw Error("model 'resnet" + std::to_string(depth) + "'", "depth must be 18 or 50");
}

std::string model_name(const ResNetSpec& spec) {
  return "resnet" + std::to_string(spec.depth);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class ResNetBuilder {
 public:
  // `values`: for kFolded, the parameter and state values by name.
  ResNetBuilder(const ResNetSpec& spec, int batch, Form form,
                std::map<std::string, const std::vector<float>*> values = {})
      : m_spec(spec), m_form(form), m_values(std::move(values)) {
    m_model.name = model_name(spec);
    m_model.batch = batch;
    const int side = spec.input > 0 ? spec.input : spec.image;
    m_model.input = g().add_input("x", {batch, side, side, spec.channels});
    if (form != Form::kFolded) m_model.labels = g().add_input("labels", {batch}, DType::kI32);
  }

  Model build() {
    const StageShape shape = stage_shape(m_spec.depth);
    int x = relu(conv_bn(padded_input(), m_spec.width, 7, 2, 3, "conv1", "bn1"), "relu");
    x = max_pool(x);
    for (size_t s = 0; s < shape.blocks.size(); ++s) {
      const int planes = m_spec.width << s;
      for (int b = 0; b < shape.blocks[s]; ++b) {
        const int stride = s > 0 && b == 0 ? 2 : 1;
        const std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(b) + ".";
        x = shape.bottleneck ? bottleneck(x, planes, stride, p) : basic(x, planes, stride, p);
      }
    }
    m_model.logits = fc(global_average_pool(x));
    if (m_form == Form::kFolded)
      g().verify();
    else
      finish_with_loss(m_model);
    return std::move(m_model);
  }

 private:
  Graph& g() { return m_model.graph; }
  int64_t channels(int v) { return g().value(v).shape.back(); }

  const std::vector<float>& values(const std::string& name) {
    const auto it = m_values.find(name);
    if (it == m_values.end()) throw Error(model_name(m_spec), "no values for '" + name + "'");
    return *it->second;
  }

  int relu(int x, const std::string& name) { return g().add_node(OpKind::kRelu, {x}, {}, name); }

  // conv k x k / stride, pad, to `out` channels, then bn.
  int conv_bn(int x, int64_t out, int k, int stride, int pad, const std::string& conv,
              const std::string& bn) {
    const Shape w_shape{k, k, channels(x), out};
    if (m_form == Form::kFolded) {
      const FoldedConv f =
          fold_batch_norm(values(conv + ".w"), values(bn + ".gamma"), values(bn + ".beta"),
                          values(bn + ".running_mean"), values(bn + ".running_var"), kBatchNormEps);
      const int w = g().add_constant(conv + ".w", w_shape, f.w);
      const int y = g().add_node(OpKind::kConv2D, {x, w}, Attrs::conv(stride, pad), conv);
      return g().add_node(OpKind::kAdd, {y, g().add_constant(bn + ".bias", {out}, f.bias)}, {}, bn);
    }
    const int w = g().add_param(conv + ".w", w_shape);
    const int y = g().add_node(OpKind::kConv2D, {x, w}, Attrs::conv(stride, pad), conv);
    const int gamma = g().add_param(bn + ".gamma", {out});
    const int beta = g().add_param(bn + ".beta", {out});
    const int mean = g().add_input(bn + ".running_mean", {out});
    const int var = g().add_input(bn + ".running_var", {out});
    if (m_form == Form::kEval) {
      m_model.state.push_back({mean, -1});
      m_model.state.push_back({var, -1});
      return batch_norm_inference(g(), y, gamma, beta, mean, var, kBatchNormEps, bn);
    }
    const BatchStatistics b = batch_norm_training(g(), y, gamma, beta, kBatchNormEps, bn);
    const RunningUpdate next = running_averages(g(), b, mean, var, kBatchNormMomentum);
    m_model.state.push_back({mean, next.mean});
    m_model.state.push_back({var, next.var});
    return b.y;
  }

  // x zero-padded to image x image.
  int padded_input() {
    Shape shape = g().value(m_model.input).shape;
    const int64_t before = (m_spec.image - shape[1]) / 2;
    if (shape[1] == m_spec.image) return m_model.input;
    shape[1] = shape[2] = m_spec.image;
    return g().add_node(OpKind::kPad, {m_model.input},
                        Attrs::padded(shape, {0, before, before, 0}, 0.0), "pad");
  }

  // 3x3 / 2 with one pad of -inf on each side of H and W.
  int max_pool(int x) {
    Shape padded = g().value(x).shape;
    padded[1] += 2;
    padded[2] += 2;
    const int p =
        g().add_node(OpKind::kPad, {x},
                     Attrs::padded(padded, {0, 1, 1, 0}, -std::numeric_limits<double>::infinity()),
                     "maxpool.pad");
    return g().add_node(OpKind::kMaxPool2D, {p}, Attrs::pool(3, 2), "maxpool");
  }

  int shortcut(int x, int64_t out, int stride, const std::string& p) {
    if (stride == 1 && channels(x) == out) return x;
    return conv_bn(x, out, 1, stride, 0, p + "downsample.0", p + "downsample.1");
  }

  int join(int y, int identity, const std::string& p) {
    return relu(g().add_node(OpKind::kAdd, {y, identity}, {}, p + "add"), p + "relu");
  }

  int basic(int x, int planes, int stride, const std::string& p) {
    int y = relu(conv_bn(x, planes, 3, stride, 1, p + "conv1", p + "bn1"), p + "relu1");
    y = conv_bn(y, planes, 3, 1, 1, p + "conv2", p + "bn2");
    return join(y, shortcut(x, planes, stride, p), p);
  }

  int bottleneck(int x, int planes, int stride, const std::string& p) {
    int y = relu(conv_bn(x, planes, 1, 1, 0, p + "conv1", p + "bn1"), p + "relu1");
    y = relu(conv_bn(y, planes, 3, stride, 1, p + "conv2", p + "bn2"), p + "relu2");
    y = conv_bn(y, 4 * int64_t{planes}, 1, 1, 0, p + "conv3", p + "bn3");
    return join(y, shortcut(x, 4 * int64_t{planes}, stride, p), p);
  }

  // [B, H, W, C] -> [B, C]: the mean over H and W.
  int global_average_pool(int x) {
    const Shape s = g().value(x).shape;
    const int64_t hw = s[1] * s[2];
    const int rows =
        g().add_node(OpKind::kReshape, {x}, Attrs::reshape({s[0], hw, s[3]}), "avgpool.rows");
    const int sum =
        g().add_node(OpKind::kSumTo, {rows}, Attrs::reshape({s[0], 1, s[3]}), "avgpool.sum");
    const int mean = g().add_node(OpKind::kScale, {sum},
                                  Attrs::scaled(1.0 / static_cast<double>(hw)), "avgpool.mean");
    return g().add_node(OpKind::kReshape, {mean}, Attrs::reshape({s[0], s[3]}), "avgpool");
  }

  int fc(int x) {
    const Shape w_shape{channels(x), m_spec.classes};
    const Shape b_shape{m_spec.classes};
    const bool folded = m_form == Form::kFolded;
    const int w =
        folded ? g().add_constant("fc.w", w_shape, values("fc.w")) : g().add_param("fc.w", w_shape);
    const int b =
        folded ? g().add_constant("fc.b", b_shape, values("fc.b")) : g().add_param("fc.b", b_shape);
    return add_linear(g(), x, w, b, "fc", "logits");
  }

  ResNetSpec m_spec;
  Form m_form;
  std::map<std::string, const std::vector<float>*> m_values;
  Model m_model;
};

void check_spec(const ResNetSpec& spec, int batch) {
  const std::string where = "model '" + model_name(spec) + "'";
  stage_shape(spec.depth);
  require_at_least(where, batch, 1, "batch");
  require_at_least(where, spec.classes, 1, "classes");
  require_at_least(where, spec.width, 1, "width");
  require_at_least(where, spec.image, 32, "image");
  require_at_least(where, spec.channels, 1, "channels");
  require_at_least(where, spec.input, 0, "input");
  if (spec.input > spec.image)
    throw Error(where, "input side " + std::to_string(spec.input) + " exceeds the image side " +
                           std::to_string(spec.image));
}

}  // namespace

ResNetSpec resnet_spec(const std::string& name) {
  if (name == "resnet18") return ResNetSpec{.depth = 18};
  if (name == "resnet50") return ResNetSpec{.depth = 50};
  throw Error("model '" + name + "'", "not a ResNet (resnet18, resnet50)");
}

Model build_resnet(const ResNetSpec& spec, int batch, BatchNormMode mode) {
  check_spec(spec, batch);
  return ResNetBuilder(spec, batch, mode == BatchNormMode::kTrain ? Form::kTrain : Form::kEval)
      .build();
}

std::vector<std::vector<float>> init_resnet_params(const Model& m, uint64_t seed) {
  SplitMix64 rng(seed);
  const double fc_bound =
      1.0 / std::sqrt(static_cast<double>(m.graph.value(m.graph.find_value("fc.w")).shape.at(0)));
  std::vector<std::vector<float>> out;
  for (int p : m.params) {
    const Value& v = m.graph.value(p);
    std::vector<float> x(static_cast<size_t>(num_elements(v.shape)),
                         ends_with(v.name, ".gamma") ? 1.0f : 0.0f);
    if (v.name == "fc.w" || v.name == "fc.b") {
      for (float& e : x) e = static_cast<float>((2.0 * rng.unit() - 1.0) * fc_bound);
    } else if (ends_with(v.name, ".w")) {  // HWIO: fan_out = KH KW Cout
      const double sd = std::sqrt(2.0 / static_cast<double>(v.shape[0] * v.shape[1] * v.shape[3]));
      for (float& e : x) e = static_cast<float>(sd * standard_normal(rng));
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<std::vector<float>> initial_resnet_state(const Model& m) {
  std::vector<std::vector<float>> out;
  for (const Model::State& s : m.state) {
    const Value& v = m.graph.value(s.value);
    out.emplace_back(static_cast<size_t>(num_elements(v.shape)),
                     ends_with(v.name, ".running_var") ? 1.0f : 0.0f);
  }
  return out;
}

Graph resnet_folded_graph(const ResNetSpec& spec, int batch, const Model& m,
                          const std::vector<std::vector<float>>& params,
                          const std::vector<std::vector<float>>& state) {
  check_spec(spec, batch);
  if (params.size() != m.params.size() || state.size() != m.state.size())
    throw Error(model_name(spec), "the parameter or state values do not match the model");
  std::map<std::string, const std::vector<float>*> values;
  for (size_t i = 0; i < params.size(); ++i) values[m.graph.value(m.params[i]).name] = &params[i];
  for (size_t i = 0; i < state.size(); ++i)
    values[m.graph.value(m.state[i].value).name] = &state[i];
  return ResNetBuilder(spec, batch, Form::kFolded, std::move(values)).build().graph;
}

}  // namespace tessera::graph
