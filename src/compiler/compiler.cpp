#include "compiler/compiler.h"

#include <ostream>
#include <sstream>

#include "common/error.h"
#include "compiler/pipeline.h"
#include "isa/disassembler.h"

namespace tessera::compiler {

std::vector<std::string> pass_names() {
  return {"autodiff", "plan-hbm", "lower"};
}

namespace {

void dump(const Pipeline& p, const std::string& pass) {
  const std::string& want = p.options.dump_after;
  if (want.empty() || p.options.dump == nullptr || (want != "all" && want != pass)) return;
  std::ostream& os = *p.options.dump;
  os << "// ---- after " << pass << "\n";
  if (pass == "autodiff") os << p.graph.dump();
  if (pass == "plan-hbm") os << dump_plan(p);
  if (pass == "lower") os << isa::disassemble(p.out.program);
}

}  // namespace

CompiledProgram compile(const graph::ModelSpec& model, const core::CoreSpec& spec,
                        const CompileOptions& options) {
  if (!options.dump_after.empty() && options.dump_after != "all") {
    const auto names = pass_names();
    if (std::find(names.begin(), names.end(), options.dump_after) == names.end())
      throw Error("compile", "unknown pass '" + options.dump_after +
                                 "' for --dump-after (passes: autodiff, plan-hbm, lower)");
  }
  if (options.batch < 1) throw Error("compile", "batch must be >= 1");
  Pipeline p;
  p.spec = &spec;
  p.options = options;
  p.model = graph::build_model(model, options.batch);
  pass_autodiff(p);
  dump(p, "autodiff");
  pass_plan_hbm(p);
  dump(p, "plan-hbm");
  pass_lower(p);
  verify_plan(p);
  dump(p, "lower");
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
