// Test support: ONNX models built in C++ with libonnx's protobuf classes (no Python needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tessera::testing {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13) {
    m_model.set_ir_version(8);
    m_model.set_producer_name("tessera-test");
    auto* o = m_model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_model.mutable_graph()->set_name("test");
  }

  // A graph input; a dim < 0 is symbolic (named "d<k>").
  OnnxBuilder& input(const std::string& name, const std::vector<int64_t>& shape,
                     int32_t type = onnx::TensorProto::FLOAT) {
    value_info(m_model.mutable_graph()->add_input(), name, shape, type);
    return *this;
  }
  OnnxBuilder& output(const std::string& name) {
    m_model.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  OnnxBuilder& init(const std::string& name, const std::vector<int64_t>& shape,
                    const std::vector<float>& data) {
    auto* t = m_model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (float v : data) t->add_float_data(v);
    return *this;
  }
  OnnxBuilder& init_ints(const std::string& name, const std::vector<int64_t>& data) {
    auto* t = m_model.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(data.size()));
    for (int64_t v : data) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = "") {
    auto* n = m_model.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? out.front() : name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  onnx::ModelProto& proto() { return m_model; }
  std::string bytes() const { return m_model.SerializeAsString(); }

 private:
  static void value_info(onnx::ValueInfoProto* v, const std::string& name,
                         const std::vector<int64_t>& shape, int32_t type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (size_t k = 0; k < shape.size(); ++k) {
      auto* d = s->add_dim();
      if (shape[k] < 0)
        d->set_dim_param("d" + std::to_string(k));
      else
        d->set_dim_value(shape[k]);
    }
  }

  onnx::ModelProto m_model;
};

}  // namespace tessera::testing
