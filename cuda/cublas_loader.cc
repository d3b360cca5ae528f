#include "cublas_loader.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace memopt::cuda {

namespace {

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

Expected<const CublasApi*> Load() {
  // The soname of the major version the headers belong to first, then whatever libcublas.so is.
  const std::string versioned = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Status(ErrorCode::kNoDevice, "cuBLAS is not loadable (" + versioned + "): " +
                                            std::string(why != nullptr ? why : "not found") +
                                            "; install the CUDA toolkit's cuBLAS or pack it with PACK_CUBLAS=1 scripts/pack.sh");
  }
  static CublasApi api;
  std::string missing;
  Resolve(lib, "cublasCreate_v2", &api.create, &missing);
  Resolve(lib, "cublasDestroy_v2", &api.destroy, &missing);
  Resolve(lib, "cublasSetStream_v2", &api.set_stream, &missing);
  Resolve(lib, "cublasSetMathMode", &api.set_math_mode, &missing);
  Resolve(lib, "cublasGemmStridedBatchedEx", &api.gemm_strided_batched_ex, &missing);
  Resolve(lib, "cublasGetStatusName", &api.status_name, &missing);
  Resolve(lib, "cublasGetStatusString", &api.status_string, &missing);
  if (!missing.empty()) {
    return Status(ErrorCode::kNoDevice, "cuBLAS (" + versioned + ") lacks the symbol '" + missing +
                                            "'; it is older than the CUDA " + std::to_string(CUBLAS_VER_MAJOR) +
                                            " toolkit memopt was built with");
  }
  return &api;
}

}  // namespace

Expected<const CublasApi*> LoadCublas() {
  // Loaded once; a failure is remembered too (the library does not appear mid-run).
  static std::once_flag once;
  static Expected<const CublasApi*> loaded = Status(ErrorCode::kNoDevice, "cuBLAS not loaded");
  std::call_once(once, [] { loaded = Load(); });
  return loaded;
}

}  // namespace memopt::cuda
