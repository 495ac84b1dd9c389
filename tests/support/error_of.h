// Test support: the message of the tessera::Error a callable throws, for the `_bad` tests that
// compare exact error texts. Returns "(no error)" when the callable returns normally; any other
// exception type propagates (and fails the test).
#pragma once

#include <string>
#include <utility>

#include "common/error.h"

namespace tessera::testing {

template <class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tessera::testing
