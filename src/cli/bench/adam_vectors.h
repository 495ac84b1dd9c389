// The Adam unit's test vectors (data/adam/vectors.txt): 12 steps of numerics::adamw_reference_step
// on 16 parameters, written as fp32 bit patterns (format in the file's header).
#pragma once

#include <string>

namespace tessera::bench {

// Writes the test vectors to `path`; throws Error if it cannot be written.
void write_adam_vectors(const std::string& path);

}  // namespace tessera::bench
