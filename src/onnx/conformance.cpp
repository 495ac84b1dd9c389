#include "onnx/conformance.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "onnx/graph_on_chip.h"
#include "onnx/host_run.h"
#include "onnx/op_table.h"

namespace tessera::onnx_import {

namespace {

namespace fs = std::filesystem;
using Status = NodeTestResult::Status;

std::string op_of(const onnx::ModelProto& m) {
  const auto& nodes = m.graph().node();
  if (nodes.empty()) return "(none)";
  return nodes.size() == 1 ? nodes[0].op_type() : nodes[0].op_type() + "+";
}

// |actual - expected| <= atol + rtol * |expected|, atol times the output's largest |expected|
// when `scaled`.
struct Tolerance {
  double rtol, atol;
  bool scaled;
};
constexpr Tolerance kHost{kConformanceRtol, kConformanceAtol, false};
constexpr Tolerance kChipFp32{kChipFp32Rtol, kChipFp32Atol, false};
constexpr Tolerance kChipBf16{kChipBf16Tol, kChipBf16Tol, true};

// Empty when `actual` matches `expected` within the tolerance, else the first mismatch.
std::string compare(const Tensor& actual, const Tensor& expected, const std::string& name,
                    const Tolerance& t) {
  if (actual.shape != expected.shape)
    return "output " + name + ": shape " + graph::shape_str(actual.shape) + ", expected " +
           graph::shape_str(expected.shape);
  double atol = t.atol;
  if (t.scaled) {
    double largest = 0;
    for (int64_t k = 0; k < expected.size(); ++k)
      if (std::isfinite(expected.at(k))) largest = std::max(largest, std::fabs(expected.at(k)));
    atol *= largest;
  }
  for (int64_t k = 0; k < expected.size(); ++k) {
    const double a = actual.at(k), e = expected.at(k);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (!(std::fabs(a - e) <= atol + t.rtol * std::fabs(e)))
      return "output " + name + "[" + std::to_string(k) + "] = " + std::to_string(a) +
             ", expected " + std::to_string(e);
  }
  return "";
}

// The importer's reasons on one line: the node lines of a multi-line error, else the message.
std::string one_line(const std::string& s) {
  const size_t nl = s.find('\n');
  if (nl == std::string::npos) return s;
  std::string out, rest = s.substr(nl + 1);
  for (size_t at = 0; at < rest.size();) {
    const size_t end = std::min(rest.find('\n', at), rest.size());
    const size_t first = rest.find_first_not_of(' ', at);
    if (first < end) out += (out.empty() ? "" : "; ") + rest.substr(first, end - first);
    at = end + 1;
  }
  return out;
}

// The op type of the test's model, read without the importer's checks (which may refuse it).
std::string op_of_file(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!m.ParseFromIstream(&in)) return "(unreadable)";
  return op_of(m);
}

std::vector<onnx::TensorProto> read_tensors(const fs::path& set, const std::string& kind, int n) {
  std::vector<onnx::TensorProto> out;
  for (int k = 0; k < n; ++k)
    out.push_back(read_tensor_file((set / (kind + "_" + std::to_string(k) + ".pb")).string()));
  return out;
}

// The model imported for one data set: integer inputs (shapes, axes, indices) bound as constants
// and, when the model does not import so, every input after the first (statistics, divisors).
ImportedModel import_for(const ModelFile& f, const std::vector<onnx::TensorProto>& inputs) {
  std::vector<std::string> names;
  for (const auto& in : f.proto.graph().input()) names.push_back(in.name());
  auto bind = [&](bool all_but_first) {
    ImportOptions o;
    for (size_t k = 0; k < inputs.size() && k < names.size(); ++k)
      if (is_integer_type(
              f.proto.graph().input(static_cast<int>(k)).type().tensor_type().elem_type()) ||
          (all_but_first && k > 0))
        o.constant_inputs[names[k]] = from_proto(inputs[k], names[k]);
    return import_model(f, o);
  };
  try {
    return bind(false);
  } catch (const Error&) {
    if (inputs.size() < 2) throw;
    return bind(true);
  }
}

// The chip's tolerance class of a graph: bf16 when an op runs on the MXU.
bool uses_mxu(const graph::Graph& g) {
  using graph::OpKind;
  for (const graph::Node& n : g.nodes())
    if (n.op == OpKind::kMatMul || n.op == OpKind::kBatchMatMul || n.op == OpKind::kConv2D)
      return true;
  return false;
}

// Runs one data set on the host and, while r.chip is still kPassed, on the chip (which updates
// r.chip, r.chip_reason and r.chip_tolerance); empty on the host's success, else its failure.
// Throws the import's Error.
std::string run_data_set(const ModelFile& f, const fs::path& set, NodeTestResult& r) {
  const int n_in = f.proto.graph().input_size() - f.proto.graph().initializer_size();
  const std::vector<onnx::TensorProto> protos = read_tensors(set, "input", n_in);
  const ImportedModel m = import_for(f, protos);
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    size_t at = 0;
    while (f.proto.graph().input(static_cast<int>(at)).name() != m.inputs[k].name) ++at;
    inputs.push_back(input_tensor(m, k, protos[at], set.string() + " input " + std::to_string(at)));
  }
  const std::vector<Tensor> outs = run_on_host(m, inputs);
  const std::vector<onnx::TensorProto> expected =
      read_tensors(set, "output", static_cast<int>(outs.size()));
  std::vector<Tensor> want;
  for (size_t k = 0; k < outs.size(); ++k) {
    want.push_back(from_proto(expected[k], m.outputs[k].name));
    const std::string diff = compare(outs[k], want.back(), m.outputs[k].name, kHost);
    if (!diff.empty()) return set.filename().string() + ": " + diff;
  }
  if (r.chip != Status::kPassed) return "";
  const bool bf16 = uses_mxu(m.graph);
  r.chip_tolerance = bf16 ? "bf16" : "fp32";
  std::vector<Tensor> chip;
  try {
    chip = run_graph_on_chip(m, inputs, core::CoreSpec{});
  } catch (const Error& e) {
    r.chip = Status::kSkipped;
    r.chip_reason = one_line(e.why());
    return "";
  }
  for (size_t k = 0; k < chip.size(); ++k) {
    const std::string diff =
        compare(chip[k], want[k], m.outputs[k].name, bf16 ? kChipBf16 : kChipFp32);
    if (!diff.empty()) {
      r.chip = Status::kFailed;
      r.chip_reason = set.filename().string() + ": " + diff;
      return "";
    }
  }
  return "";
}

}  // namespace

NodeTestResult run_node_test(const std::string& test_dir) {
  NodeTestResult r;
  r.test = fs::path(test_dir).filename().string();
  const std::string model = (fs::path(test_dir) / "model.onnx").string();
  r.op = op_of_file(model);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(test_dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  try {
    const ModelFile f = load_model_file(model);
    r.chip = Status::kPassed;
    for (const fs::path& set : sets) {
      r.reason = run_data_set(f, set, r);
      if (!r.reason.empty()) {
        r.status = Status::kFailed;
        r.chip = Status::kSkipped;
        r.chip_reason.clear();
        return r;
      }
    }
  } catch (const Error& e) {
    r.reason = one_line(e.why());  // the why alone: the where is the installation's path
    r.chip = Status::kSkipped;
    r.chip_reason.clear();
    return r;
  }
  r.status = sets.empty() ? Status::kSkipped : Status::kPassed;
  if (sets.empty()) {
    r.reason = "no data sets";
    r.chip = Status::kSkipped;
  }
  return r;
}

std::vector<NodeTestResult> run_node_tests(const std::string& dir) {
  if (!fs::is_directory(dir)) throw Error(dir, "no ONNX node tests here (Debian libonnx-testdata)");
  std::vector<std::string> tests;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("test_", 0) == 0) tests.push_back(e.path().string());
  std::sort(tests.begin(), tests.end());
  std::vector<NodeTestResult> results;
  for (const std::string& t : tests) results.push_back(run_node_test(t));
  return results;
}

std::string conformance_markdown(const std::vector<NodeTestResult>& results) {
  std::map<std::string, std::vector<const NodeTestResult*>> by_op;
  for (const NodeTestResult& r : results) by_op[r.op].push_back(&r);
  const std::vector<std::string> supported = supported_op_types();
  std::ostringstream os;
  os << "| op | passed / run | skipped | chip passed / run | chip tolerance |\n"
        "| --- | --- | --- | --- | --- |\n";
  for (const std::string& op : supported) {
    int passed = 0, run = 0, skipped = 0, chip_passed = 0, chip_run = 0;
    std::set<std::string> tolerances;
    for (const NodeTestResult* r : by_op[op]) {
      passed += r->status == Status::kPassed;
      run += r->status != Status::kSkipped;
      skipped += r->status == Status::kSkipped;
      chip_passed += r->chip == Status::kPassed;
      chip_run += r->chip != Status::kSkipped;
      if (r->chip != Status::kSkipped) tolerances.insert(r->chip_tolerance);
    }
    std::string tol;
    for (const std::string& t : tolerances) tol += (tol.empty() ? "" : ", ") + t;
    os << "| " << op << " | " << passed << " / " << run << " | " << skipped << " | " << chip_passed
       << " / " << chip_run << " | " << (tol.empty() ? "-" : tol) << " |\n";
  }
  os << "\nSkipped and failed tests of the supported ops, with the reason:\n\n";
  for (const std::string& op : supported)
    for (const NodeTestResult* r : by_op[op])
      if (r->status != Status::kPassed)
        os << "- `" << r->test << "` (" << op << (r->status == Status::kFailed ? ", FAILED" : "")
           << "): " << r->reason << "\n";
  std::ostringstream chip;
  for (const std::string& op : supported)
    for (const NodeTestResult* r : by_op[op])
      if (r->status == Status::kPassed && r->chip != Status::kPassed)
        chip << "- `" << r->test << "` (" << op << (r->chip == Status::kFailed ? ", FAILED" : "")
             << "): " << r->chip_reason << "\n";
  os << "\nTests that pass on the host but not on the chip, with the reason: "
     << (chip.str().empty() ? "none.\n" : "\n\n" + chip.str());
  std::set<std::string> others;
  for (const auto& [op, list] : by_op)
    if (!std::binary_search(supported.begin(), supported.end(), op)) others.insert(op);
  os << "\nNode tests of op types the importer does not support (or of several nodes, marked +; "
        "skipped): ";
  std::string sep;
  for (const std::string& op : others) {
    os << sep << op << " (" << by_op[op].size() << ")";
    sep = ", ";
  }
  os << ".\n";
  return os.str();
}

}  // namespace tessera::onnx_import
