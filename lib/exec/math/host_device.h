// MEMOPT_HD marks math written once for both executors: plain inline functions in the CPU
// reference, __host__ __device__ when nvcc compiles a CUDA kernel that includes the same header.
// The CPU tests of the reference kernels therefore cover the GPU kernels' arithmetic too.
#pragma once

#if defined(__CUDACC__)
#define MEMOPT_HD __host__ __device__ inline
#else
#define MEMOPT_HD inline
#endif
