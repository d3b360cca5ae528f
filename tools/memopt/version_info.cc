#include "version_info.h"

#include <dlfcn.h>

#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

#include "exec/kernels/kernel_util.h"

namespace memopt::cli {

std::string CudaDriverVersion() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return "";
  std::string version;
  using GetVersion = int (*)(int*);
  if (auto fn = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion"))) {
    int v = 0;
    if (fn(&v) == 0 && v > 0) version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  dlclose(lib);
  return version;
}

std::string VersionString() {
  std::string v = std::string("memopt ") + MEMOPT_VERSION + " (onnx " + onnx::LAST_RELEASE_VERSION + ", protobuf " +
                  google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION);
  // The BLAS kernels chosen at run time (OPENBLAS_CORETYPE): the CPU results' bits depend on them.
  const std::string blas = BlasCoreName();
  if (!blas.empty()) v += ", OpenBLAS " + blas;
#ifdef MEMOPT_CUDA_VERSION
  v += std::string(", CUDA ") + MEMOPT_CUDA_VERSION;
#else
  v += ", CUDA not built";
#endif
  const std::string driver = CudaDriverVersion();
  v += driver.empty() ? ", no CUDA driver)" : ", driver " + driver + ")";
  return v;
}

}  // namespace memopt::cli
