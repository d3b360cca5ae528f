// cuBLAS is loaded at run time (dlopen), the first time a GPU run needs it: memopt itself then does
// not depend on libcublas/libcublasLt (several hundred MB) for scan, plan, apply or a CPU bench,
// and a packed binary (scripts/pack.sh) stays small unless PACK_CUBLAS=1 bundles them.
// Only the handful of entry points the kernels use are resolved.
#pragma once

#include <cublas_v2.h>

#include "util/status.h"

namespace memopt::cuda {

/// cublasGemmStridedBatchedEx, whose name C++ overloads (so decltype cannot name it).
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void*, const void*, cudaDataType, int, long long, const void*,
                                                  cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                  long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  GemmStridedBatchedExFn gemm_strided_batched_ex = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
};

/// The loaded API (loaded once, then shared). kNoDevice naming the library and dlerror's reason
/// when libcublas.so.<major> (the major version memopt was built against) or one of its symbols
/// is missing.
Expected<const CublasApi*> LoadCublas();

}  // namespace memopt::cuda
