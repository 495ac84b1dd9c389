// ONNX's backend node tests (Debian libonnx-testdata: <dir>/test_*/model.onnx with
// test_data_set_N/input_K.pb and output_K.pb) run on the host fp32 executor.
//
// A test is skipped, with the importer's error as the reason, when its model does not import
// (an op type, attribute or shape the importer does not cover, an opset above 17); otherwise it
// runs every data set and passes when every output element satisfies ONNX's backend-runner
// tolerance |actual - expected| <= atol + rtol * |expected| (onnx/backend/test/case/test_case.py:
// rtol 1e-3, atol 1e-7), shapes equal.
//
// A test that passes on the host runs again on one simulated tensor core (graph_on_chip.h, chip
// numerics). Tolerance per test, by where its graph's arithmetic runs:
//   fp32: no MXU op (vector unit, EUP, DMA): rtol 1e-3, atol 1e-6 (the runner's rtol; erf's
//         approximation error, graph/chip_unary.h, bounds atol)
//   bf16: a matmul, batch_matmul or conv2d (operands rounded to bf16 on the MXU): rtol 2^-7, and
//         atol 2^-7 times the output's largest |expected| (bf16's 8 significant bits, the sums'
//         cancellation measured against the output's scale)
// A graph the compiler cannot lower skips the chip run with the compiler's reason.
#pragma once

#include <string>
#include <vector>

namespace tessera::onnx_import {

inline constexpr double kConformanceRtol = 1e-3;
inline constexpr double kConformanceAtol = 1e-7;
inline constexpr double kChipFp32Rtol = 1e-3;
inline constexpr double kChipFp32Atol = 1e-6;
inline constexpr double kChipBf16Tol = 1.0 / 128;

// Where Debian installs the node tests.
inline constexpr const char* kNodeTestDir = "/usr/share/libonnx-testdata/data/node";

struct NodeTestResult {
  std::string test;  // the directory name, e.g. "test_relu"
  std::string op;    // the op type of the model's node (several: the first, with "+")
  enum class Status { kPassed, kFailed, kSkipped } status = Status::kSkipped;
  std::string reason;  // why skipped or failed
  // The chip run (only of tests that pass on the host): status, reason, and the tolerance class
  // applied ("fp32" or "bf16").
  Status chip = Status::kSkipped;
  std::string chip_reason, chip_tolerance;
};

NodeTestResult run_node_test(const std::string& test_dir);
// Every test_* directory of `dir`, sorted by name.
std::vector<NodeTestResult> run_node_tests(const std::string& dir);
// The per-op table (Markdown) of docs/onnx.md: ops the importer supports with passed / run and
// every skipped test with its reason, then the op types it does not support.
std::string conformance_markdown(const std::vector<NodeTestResult>& results);

}  // namespace tessera::onnx_import
