#include "compiler/compiler.h"

#include <ostream>
#include <sstream>

#include "common/error.h"
#include "compiler/data_parallel.h"
#include "compiler/pipeline.h"
#include "isa/disassembler.h"

namespace tessera::compiler {

std::vector<std::string> pass_names(const CompileOptions& options) {
  std::vector<std::string> names = {"autodiff", "plan-hbm", "lower"};
  if (options.allreduce)
    names.push_back(options.allreduce->bucket_words > 0 ? "buckets" : "allreduce");
  return names;
}

namespace {

void dump(const Pipeline& p, const std::string& pass) {
  const std::string& want = p.options.dump_after;
  if (want.empty() || p.options.dump == nullptr || (want != "all" && want != pass)) return;
  std::ostream& os = *p.options.dump;
  os << "// ---- after " << pass << "\n";
  if (pass == "autodiff") os << p.graph.dump();
  if (pass == "plan-hbm") os << dump_plan(p);
  if (pass == "lower" || pass == "allreduce" || pass == "buckets")
    os << isa::disassemble(p.out.program);
}

// The core the step is lowered for: with bucketed data-parallel training, `spec` without the
// bucket region (data_parallel.h bucket_step_spec).
core::CoreSpec lowering_spec(const core::CoreSpec& spec, const CompileOptions& o,
                             const graph::Model& model) {
  if (!o.allreduce || o.allreduce->bucket_words <= 0) return spec;
  int64_t gradient_words = 0;
  for (int id : model.params) gradient_words += graph::num_elements(model.graph.value(id).shape);
  return bucket_step_spec(spec, gradient_words, static_cast<int>(model.params.size()),
                          o.allreduce->bucket_words);
}

}  // namespace

CompiledProgram compile(const graph::ModelSpec& model, const core::CoreSpec& spec,
                        const CompileOptions& options) {
  if (options.batch < 1) throw Error("compile", "batch must be >= 1");
  return compile(graph::build_model(model, options.batch), spec, options);
}

CompiledProgram compile(graph::Model model, const core::CoreSpec& spec,
                        const CompileOptions& options) {
  const std::vector<std::string> names = pass_names(options);
  if (!options.dump_after.empty() && options.dump_after != "all" &&
      std::find(names.begin(), names.end(), options.dump_after) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error("compile", "unknown pass '" + options.dump_after +
                               "' for --dump-after (passes: " + list + ")");
  }
  Pipeline p;
  p.options = options;
  p.options.batch = model.batch;
  p.model = std::move(model);
  const core::CoreSpec lowered = lowering_spec(spec, options, p.model);
  p.spec = &lowered;
  p.machine = &spec;
  if (options.allreduce) {
    p.options.persistent_grads = true;
    p.options.kernel_barriers = p.options.kernel_barriers || options.allreduce->bucket_words > 0;
  }
  pass_autodiff(p);
  dump(p, "autodiff");
  pass_plan_hbm(p);
  dump(p, "plan-hbm");
  pass_lower(p);
  verify_plan(p);
  dump(p, "lower");
  if (options.allreduce) {
    if (options.allreduce->bucket_words > 0) {
      pass_bucket_allreduce(p);
      dump(p, "buckets");
    } else {
      pass_allreduce(p);
      dump(p, "allreduce");
    }
  }
  return std::move(p.out);
}

std::string stats_json(const CompileStats& s) {
  std::ostringstream os;
  os << "{\"bundles\": " << s.bundles << ", \"kernels\": " << s.kernels
     << ", \"gemms\": " << s.gemms << ", \"hbm_words\": " << s.hbm_words
     << ", \"transient_words\": " << s.transient_words
     << ", \"transient_unshared_words\": " << s.transient_unshared_words
     << ", \"vmem_peak_rows\": " << s.vmem_peak_rows << ", \"smem_words\": " << s.smem_words
     << ", \"mxu_macs\": " << s.mxu_macs << "}";
  return os.str();
}

}  // namespace tessera::compiler
