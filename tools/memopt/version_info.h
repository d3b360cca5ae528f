// `memopt --version`: memopt's version and the versions of what it is built with or finds.
#pragma once

#include <string>

namespace memopt::cli {

/// "memopt 0.1.0 (onnx 1.12.0, protobuf 3.21.12, CUDA 12.4, driver 12.6)". CUDA is the toolkit the
/// build used ("CUDA not built" without one); the driver is asked through libcuda.so.1 when it is
/// installed ("no CUDA driver" otherwise).
std::string VersionString();

/// The installed CUDA driver's version ("12.6"), or "" when libcuda.so.1 cannot be loaded.
std::string CudaDriverVersion();

}  // namespace memopt::cli
