#include "core/sparse_core_spec.h"

namespace tessera::core {

SparseCoreSpec read_sparse_core_spec(ConfigReader& r) {
  SparseCoreSpec s;
  s.hbm_request_bytes =
      r.get_int("core.sparse.hbm_request_bytes", s.hbm_request_bytes, {4, 1 << 16}, "bytes",
                "HBM request granularity of the sparse core (a whole number of 32-bit words)");
  s.hbm_outstanding = r.get_int("core.sparse.hbm_outstanding", s.hbm_outstanding, {1, 1 << 20},
                                "requests", "sparse core HBM requests in flight");
  s.hbm_latency = r.get_int("core.sparse.hbm_latency", s.hbm_latency, {0, 1000000}, "cycles",
                            "sparse core HBM request issue to its first byte");
  s.hbm_bytes_per_cycle = r.get_float("core.sparse.hbm_bytes_per_cycle", s.hbm_bytes_per_cycle,
                                      {0.001, 1e6}, "bytes/cycle", "sparse core HBM bandwidth");
  s.vmem_latency = r.get_int("core.sparse.vmem_latency", s.vmem_latency, {0, 1000000}, "cycles",
                             "hand-off into the tensor core's vector memory: issue to first byte");
  s.vmem_bytes_per_cycle =
      r.get_float("core.sparse.vmem_bytes_per_cycle", s.vmem_bytes_per_cycle, {0.001, 1e6},
                  "bytes/cycle", "hand-off into the tensor core's vector memory: bandwidth");
  s.vmem_handoff_bytes = r.get_int(
      "core.sparse.vmem_handoff_bytes", s.vmem_handoff_bytes, {0, int64_t{1} << 40}, "bytes",
      "a compiled step's lookup result up to this size goes straight into vector memory, "
      "a larger one through HBM");
  s.ids_per_cycle = r.get_int("core.sparse.ids_per_cycle", s.ids_per_cycle, {1, 1 << 16},
                              "ids/cycle", "lookup front end: ids turned into row requests");
  s.simd_width = r.get_int("core.sparse.simd_width", s.simd_width, {1, 1 << 16}, "elements/cycle",
                           "SIMD datapath: fp32 element operations per cycle");
  s.descriptor_cycles = r.get_int("core.sparse.descriptor_cycles", s.descriptor_cycles, {0, 100000},
                                  "cycles", "fetch and decode of one descriptor");
  s.queue = r.get_int("core.sparse.queue", s.queue, {1, 1 << 20}, "descriptors",
                      "descriptors the sparse core's queue holds");
  s.flags = static_cast<int>(
      r.get_int("core.sparse.flags", s.flags, {1, 64}, "flags", "the sparse core's sync flags"));
  s.id_pj = r.get_float("core.sparse.energy.id_pj", s.id_pj, {0, 1e6}, "pJ",
                        "one id through the sparse core's front end");
  s.element_op_pj = r.get_float("core.sparse.energy.element_op_pj", s.element_op_pj, {0, 1e6}, "pJ",
                                "one fp32 element operation in the sparse core's SIMD datapath");
  s.vmem_byte_pj = r.get_float("core.sparse.energy.vmem_byte_pj", s.vmem_byte_pj, {0, 1e6}, "pJ",
                               "one byte handed into the tensor core's vector memory");
  s.descriptor_pj = r.get_float("core.sparse.energy.descriptor_pj", s.descriptor_pj, {0, 1e6}, "pJ",
                                "fetch and decode of one sparse-core descriptor");
  if (!r.is_schema())
    r.require(s.hbm_request_bytes % 4 == 0, "core.sparse.hbm_request_bytes",
              "the request granularity must be a whole number of 32-bit words");
  return s;
}

}  // namespace tessera::core
