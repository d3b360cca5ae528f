// ops_coverage for the CUDA build: every op with a CUDA kernel has a CPU kernel and a shape rule.
#include <catch2/catch.hpp>

#include "cuda_kernel.h"
#include "helpers/ops_coverage.h"

namespace memopt {
namespace {

TEST_CASE("ops_coverage: every CUDA kernel's op has a CPU kernel and a shape rule", "[ops][ops_coverage][cuda]") {
  const std::vector<std::string> cuda_ops = cuda::CudaKernelRegistry::Builtin().OpNames();
  REQUIRE(cuda_ops.size() > 50);
  const std::vector<std::string> problems = testing::CoverageProblems({&Ops(), {}, cuda_ops});
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
}

}  // namespace
}  // namespace memopt
