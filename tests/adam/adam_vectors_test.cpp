// data/adam/vectors.txt (written by `tessera adam vectors --out data/adam/vectors.txt`): the unit
// and the host reference must both reproduce the stored fp32 bits.
#include "cli/bench/adam_vectors.h"

#include <bit>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "cli/bench/adam_unit_session.h"
#include "numerics/adam.h"

namespace tessera::core {
namespace {

struct Vectors {
  AdamHyper h;
  int64_t n = 0, steps = 0;
  std::vector<float> theta0, theta, m, v;
  std::vector<std::vector<float>> g;
};

std::vector<float> hex_floats(std::istringstream& in) {
  std::vector<float> out;
  std::string w;
  while (in >> w)
    out.push_back(std::bit_cast<float>(static_cast<uint32_t>(std::stoul(w, nullptr, 16))));
  return out;
}

Vectors load() {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/data/adam/vectors.txt";
  if (std::getenv("UPDATE_GOLDEN")) bench::write_adam_vectors(path);
  std::ifstream f(path);
  EXPECT_TRUE(f.good());
  Vectors v;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "hyper")
      in >> v.h.lr >> v.h.b1 >> v.h.b2 >> v.h.eps >> v.h.weight_decay;
    else if (key == "n")
      in >> v.n;
    else if (key == "steps")
      in >> v.steps;
    else if (key == "theta0")
      v.theta0 = hex_floats(in);
    else if (key == "g")
      v.g.push_back(hex_floats(in));
    else if (key == "theta")
      v.theta = hex_floats(in);
    else if (key == "m")
      v.m = hex_floats(in);
    else if (key == "v")
      v.v = hex_floats(in);
  }
  return v;
}

TEST(AdamVectors, UnitAndReferenceReproduceTheStoredVectors) {
  const Vectors d = load();
  ASSERT_EQ(d.n, 16);
  ASSERT_EQ(static_cast<int64_t>(d.g.size()), d.steps);
  std::vector<float> theta = d.theta0, m(16, 0.0f), v(16, 0.0f);
  for (int64_t t = 1; t <= d.steps; ++t)
    numerics::adamw_reference_step(theta.data(), m.data(), v.data(), d.g[t - 1].data(), 16, d.h.lr,
                                   d.h.b1, d.h.b2, d.h.eps, d.h.weight_decay, t);
  EXPECT_TRUE(adam_test::same_bits(theta, d.theta));
  EXPECT_TRUE(adam_test::same_bits(m, d.m));
  EXPECT_TRUE(adam_test::same_bits(v, d.v));

  bench::AdamUnitSession s(adam_test::small_spec(5), d.n, d.h);
  s.set_theta(d.theta0);
  for (const auto& g : d.g) s.step(g);
  EXPECT_TRUE(adam_test::same_bits(s.theta(), d.theta));
  for (int64_t i = 0; i < d.n; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(s.unit().m_at(s.hbm(), i)), std::bit_cast<uint32_t>(d.m[i]));
    EXPECT_EQ(std::bit_cast<uint32_t>(s.unit().v_at(s.hbm(), i)), std::bit_cast<uint32_t>(d.v[i]));
  }
}

}  // namespace
}  // namespace tessera::core
