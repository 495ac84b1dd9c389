#include "common/error.h"

namespace tessera {

void check_failed(const char* cond, const char* file, int line, const std::string& msg) {
  throw Error(fmt::format("{}:{}", file, line),
              fmt::format("internal check `{}` failed: {}", cond, msg));
}

}  // namespace tessera
