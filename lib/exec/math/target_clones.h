// MEMOPT_VECTOR_CLONES: compile a function for AVX-512, AVX2 and the x86-64 baseline and pick one
// at load time (GCC function multiversioning), for the vectorised loops of exec/math; empty where
// GCC's target_clones is not available.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MEMOPT_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MEMOPT_VECTOR_CLONES
#endif
