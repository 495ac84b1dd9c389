#include "core/loader.h"

#include <fmt/format.h>

#include "common/error.h"
#include "core/fault.h"

namespace tessera::core {

void load_program_data(const isa::Program& program, ArchState& s, const CoreSpec& spec) {
  for (size_t i = 0; i < program.data.size(); ++i) {
    const isa::DataSegment& seg = program.data[i];
    const auto n = static_cast<int64_t>(seg.words.size());
    const uint64_t scale = seg.space == isa::Space::Vmem ? static_cast<uint64_t>(spec.lanes) : 1u;
    const int64_t size = seg.space == isa::Space::Smem   ? s.smem.size()
                         : seg.space == isa::Space::Vmem ? s.vmem.size()
                                                         : s.hbm.size();
    if (seg.address > static_cast<uint64_t>(size) / scale ||
        static_cast<int64_t>(seg.address * scale) + n > size)
      throw Error(fmt::format("program data segment {} ({} at {})", i, isa::to_string(seg.space),
                              seg.address),
                  fmt::format("{} words do not fit the {} words of {}", n, size,
                              isa::to_string(seg.space)));
    const auto at = static_cast<int64_t>(seg.address * scale);
    switch (seg.space) {
      case isa::Space::Smem:
        std::copy(seg.words.begin(), seg.words.end(), s.smem.data() + at);
        break;
      case isa::Space::Vmem:
        std::copy(seg.words.begin(), seg.words.end(), s.vmem.data() + at);
        break;
      case isa::Space::Hbm:
        s.hbm.write_block(at, seg.words.data(), n);
        break;
    }
  }
  s.pid = program.index;
}

void fault_fetch(int64_t pc, int64_t cycle, size_t code_size) {
  throw SimFault(
      pc, cycle, "no bundle",
      fmt::format("fetch outside the code (0..{}): the program ran off its end or branched "
                  "outside it (every path must end with halt)",
                  static_cast<int64_t>(code_size) - 1));
}

void fault_limit(int64_t pc, int64_t cycle, const isa::Bundle& b, int64_t limit) {
  throw SimFault(
      pc, cycle, bundle_text(b),
      fmt::format("bundle limit of {} reached (a runaway loop? raise --max-bundles)", limit));
}

}  // namespace tessera::core
