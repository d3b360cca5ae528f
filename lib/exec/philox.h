// Counter-based random numbers for the Dropout family: Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11), written as host/device inline functions so that a
// CUDA kernel produces bit-identical masks to the CPU reference.
//
// Mask convention (shared by every Dropout-family kernel, CPU and GPU):
//   key     = (seed & 0xffffffff, seed >> 32)
//   counter = (k & 0xffffffff, k >> 32, 0, 0) for k = element_index / 4
//   one Philox call yields the four 32-bit words for elements 4k .. 4k+3 (word j -> element 4k+j)
//   uniform = (word >> 8) * 2^-24, exactly representable in float, in [0, 1)
//   keep    = uniform < 1 - ratio   (so ratio 0 keeps everything and ratio 1 drops everything)
// The element index is the flat row-major index into the Dropout input, so a recomputed Dropout
// (same seed, same shape) reproduces the forward mask, and Dropout / BitmaskDropout / BiasDropout
// with the same seed draw the same bits.
#pragma once

#include <cstdint>
#include <string_view>

#include "util/half.h"

namespace memopt {

struct Philox4x32 {
  uint32_t v[4];
};

namespace philox_detail {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

MEMOPT_HALF_HD inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}
}  // namespace philox_detail

/// Philox4x32 with 10 rounds: the bijection of `counter` under `key`.
MEMOPT_HALF_HD inline Philox4x32 Philox4x32_10(Philox4x32 counter, uint32_t key0, uint32_t key1) {
  using namespace philox_detail;
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kMul0, c0, &hi0, &lo0);
    MulHiLo(kMul1, c2, &hi1, &lo1);
    uint32_t n0 = hi1 ^ c1 ^ key0;
    uint32_t n2 = hi0 ^ c3 ^ key1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  Philox4x32 out;
  out.v[0] = c0;
  out.v[1] = c1;
  out.v[2] = c2;
  out.v[3] = c3;
  return out;
}

/// The four random words for elements 4*block .. 4*block+3 under `seed` (see the file comment).
MEMOPT_HALF_HD inline Philox4x32 DropoutRandomBlock(uint64_t seed, uint64_t block) {
  Philox4x32 counter;
  counter.v[0] = static_cast<uint32_t>(block);
  counter.v[1] = static_cast<uint32_t>(block >> 32);
  counter.v[2] = 0;
  counter.v[3] = 0;
  return Philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// A 32-bit random word mapped to [0, 1) with 24 bits: exact in float.
MEMOPT_HALF_HD inline float PhiloxUniform(uint32_t word) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f);
}

/// Keep probability used by the mask test `uniform < keep`; computed once per kernel call in float.
MEMOPT_HALF_HD inline float DropoutKeepProbability(float ratio) { return 1.0f - ratio; }

/// The scale of a kept element, 1 / (1 - ratio), or 0 at ratio 1 (everything dropped).
MEMOPT_HALF_HD inline double DropoutScale(double ratio) { return ratio >= 1.0 ? 0.0 : 1.0 / (1.0 - ratio); }

/// Whether element `index` is kept (one Philox call per element: for tests and scalar GPU code;
/// bulk code should use DropoutRandomBlock once per 4 elements).
MEMOPT_HALF_HD inline bool DropoutKeep(uint64_t seed, uint64_t index, float keep_probability) {
  Philox4x32 r = DropoutRandomBlock(seed, index / 4);
  return PhiloxUniform(r.v[index % 4]) < keep_probability;
}

/// SplitMix64 finaliser: a bijective 64-bit mixer.
MEMOPT_HALF_HD inline uint64_t MixBits64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Seed of a Dropout-family node without a `seed` attribute: the run seed mixed with the FNV-1a
/// hash of the node's first output name, so every node draws its own stream and the stream is the
/// same for every run (and recompute) with the same run seed. Host-only (takes a string).
inline uint64_t DropoutSeedFromName(uint64_t run_seed, std::string_view output_name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a offset basis
  for (char c : output_name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;  // FNV prime
  }
  return MixBits64(run_seed ^ MixBits64(h));
}

/// Seed of a node with a `seed` attribute: the attribute's 64-bit two's-complement value.
inline uint64_t DropoutSeedFromAttribute(int64_t seed_attribute) { return static_cast<uint64_t>(seed_attribute); }

}  // namespace memopt
