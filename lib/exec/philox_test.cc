#include "exec/philox.h"

#include <cmath>

#include <catch2/catch.hpp>

namespace memopt {
namespace {

void CheckWords(const Philox4x32& r, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  CHECK(r.v[0] == a);
  CHECK(r.v[1] == b);
  CHECK(r.v[2] == c);
  CHECK(r.v[3] == d);
}

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[philox]") {
  CheckWords(Philox4x32_10(Philox4x32{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  CheckWords(Philox4x32_10(Philox4x32{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu),
             0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  CheckWords(Philox4x32_10(Philox4x32{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u),
             0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST_CASE("Dropout counter layout: block k = element index / 4, seed split into the key", "[philox]") {
  const uint64_t seed = 0x0123456789abcdefull;
  const uint64_t block = 0x0000000500000007ull;
  Philox4x32 direct = Philox4x32_10(Philox4x32{{7u, 5u, 0u, 0u}}, 0x89abcdefu, 0x01234567u);
  Philox4x32 via = DropoutRandomBlock(seed, block);
  for (int j = 0; j < 4; ++j) CHECK(direct.v[j] == via.v[j]);
  // DropoutKeep reads word index % 4 of block index / 4.
  for (uint64_t i = 4 * block; i < 4 * block + 4; ++i) {
    CHECK(DropoutKeep(seed, i, 0.5f) == (PhiloxUniform(via.v[i % 4]) < 0.5f));
  }
}

TEST_CASE("PhiloxUniform maps words onto 0 <= u < 1 with 24 bits", "[philox]") {
  CHECK(PhiloxUniform(0u) == 0.0f);
  CHECK(PhiloxUniform(0xffu) == 0.0f);        // low 8 bits dropped
  CHECK(PhiloxUniform(0x100u) == 1.0f / 16777216.0f);
  CHECK(PhiloxUniform(0xffffffffu) == 1.0f - 1.0f / 16777216.0f);
  CHECK(PhiloxUniform(0x80000000u) == 0.5f);
  // ratio 0 keeps everything, ratio 1 drops everything.
  CHECK(PhiloxUniform(0xffffffffu) < DropoutKeepProbability(0.0f));
  CHECK_FALSE(PhiloxUniform(0u) < DropoutKeepProbability(1.0f));
}

TEST_CASE("Dropout keep rate is close to 1 - ratio", "[philox]") {
  for (float ratio : {0.1f, 0.5f, 0.9f}) {
    const int n = 200000;
    int kept = 0;
    for (int i = 0; i < n; ++i) kept += DropoutKeep(42, static_cast<uint64_t>(i), DropoutKeepProbability(ratio)) ? 1 : 0;
    // 5 standard deviations of a binomial(n, 1 - ratio).
    const double expected = n * (1.0 - ratio);
    const double sigma = std::sqrt(n * ratio * (1.0 - ratio));
    INFO("ratio " << ratio << ": kept " << kept);
    CHECK(std::abs(kept - expected) < 5 * sigma);
  }
}

TEST_CASE("Dropout seeds from names are deterministic and distinct", "[philox]") {
  CHECK(DropoutSeedFromName(7, "dropout_out") == DropoutSeedFromName(7, "dropout_out"));
  CHECK(DropoutSeedFromName(7, "dropout_out") != DropoutSeedFromName(8, "dropout_out"));
  CHECK(DropoutSeedFromName(7, "dropout_out") != DropoutSeedFromName(7, "dropout_out2"));
  CHECK(DropoutSeedFromAttribute(-1) == 0xffffffffffffffffull);
  CHECK(DropoutSeedFromAttribute(5) == 5u);
}

}  // namespace
}  // namespace memopt
