// Test support: fp32 results of the simulated chip against the host reference, bit for bit (the
// count of differing elements and the first of them in the failure message).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::testing {

inline void expect_bit_equal(const std::vector<float>& chip, const std::vector<float>& host,
                             const std::string& what) {
  ASSERT_EQ(chip.size(), host.size()) << what;
  size_t diff = 0, first = 0;
  for (size_t i = 0; i < chip.size(); ++i)
    if (std::memcmp(&chip[i], &host[i], 4) != 0 && diff++ == 0) first = i;
  EXPECT_EQ(diff, 0u) << what << ": " << diff << " of " << chip.size() << " differ, first at "
                      << first << ": chip " << chip[first] << " host " << host[first];
}

}  // namespace tessera::testing
