#include "bench_backend.h"

#ifdef MEMOPT_HAVE_CUDA
#include "cuda_bench.h"
#endif

namespace memopt::cli {

Expected<std::unique_ptr<BenchBackend>> MakeBenchBackend(const std::string& device, bool allow_tf32) {
  if (device == "cpu") return CpuBenchBackend();
  if (device != "cuda") return UsageError("unknown --device '" + device + "'; use cpu or cuda");
#ifdef MEMOPT_HAVE_CUDA
  return cuda::CudaBenchBackend(allow_tf32);
#else
  (void)allow_tf32;
  return Status(ErrorCode::kNoDevice,
                "no usable GPU: this build has no CUDA backend (nvcc was not found when it was configured); use "
                "--device cpu");
#endif
}

}  // namespace memopt::cli
