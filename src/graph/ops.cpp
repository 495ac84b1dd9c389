#include "graph/ops.h"

namespace tessera::graph {

std::optional<OpKind> op_from_mnemonic(std::string_view mnemonic) {
  for (const OpInfo& info : kOpTable)
    if (info.mnemonic == mnemonic) return info.kind;
  return std::nullopt;
}

}  // namespace tessera::graph
