// `memopt bench --device`: the backend it runs on, picked once (exec/bench_backend.h).
#pragma once

#include <memory>
#include <string>

#include "exec/bench_backend.h"

namespace memopt::cli {

/// The backend of --device `device`: "cpu", or "cuda" (which probes the GPU first: kNoDevice
/// without a usable one, or in a build without the CUDA backend). Another name is a usage error.
Expected<std::unique_ptr<BenchBackend>> MakeBenchBackend(const std::string& device, bool allow_tf32);

}  // namespace memopt::cli
