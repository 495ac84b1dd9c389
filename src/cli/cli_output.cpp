#include "cli/cli_output.h"

#include <cstdio>

namespace tessera::cli {

void print_training_progress(int epoch, int64_t steps, int64_t total, double loss) {
  if (steps % 10 != 0 && steps != total) return;
  std::fprintf(stderr, "\repoch %d [%-30s] %lld/%lld loss %.4f", epoch + 1,
               std::string(static_cast<size_t>(30 * steps / total), '#').c_str(),
               static_cast<long long>(steps), static_cast<long long>(total), loss);
  if (steps == total) std::fprintf(stderr, "\n");
}

}  // namespace tessera::cli
