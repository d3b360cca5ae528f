// TransposeBlock4 against the definition, on the 8x8 path and the element-by-element one, over
// blocks with and without edges and with row strides wider than the block.
#include "exec/kernels/transpose_block.h"

#include <catch2/catch.hpp>
#include <vector>

namespace memopt {
namespace {

TEST_CASE("TransposeBlock4 transposes every element", "[exec][kernels][transpose]") {
  struct Case {
    int64_t rows, cols, src_stride, dst_stride;
  };
  const std::vector<Case> cases = {
      {8, 8, 8, 8},      // one square
      {32, 32, 32, 32},  // a whole tile
      {32, 32, 1024, 256},  // a tile inside wider matrices
      {13, 29, 40, 17},  // edges on both sides
      {7, 5, 7, 9},      // no whole square
      {1, 40, 40, 1},    // one row
  };
  const bool scalar = GENERATE(false, true);
  TransposeBlockScalarForTesting(scalar);
  for (const Case& t : cases) {
    INFO("scalar " << scalar << " rows " << t.rows << " cols " << t.cols << " strides " << t.src_stride << ", "
                   << t.dst_stride);
    std::vector<uint32_t> src(static_cast<size_t>(t.rows * t.src_stride));
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
    const uint32_t kUntouched = 0xDEADBEEFu;
    std::vector<uint32_t> dst(static_cast<size_t>(t.cols * t.dst_stride), kUntouched);
    TransposeBlock4(src.data(), t.src_stride, dst.data(), t.dst_stride, t.rows, t.cols);
    for (int64_t c = 0; c < t.cols; ++c) {
      for (int64_t r = 0; r < t.dst_stride; ++r) {
        const uint32_t got = dst[static_cast<size_t>(c * t.dst_stride + r)];
        INFO("dst[" << c << "][" << r << "]");
        if (r < t.rows) {
          CHECK(got == src[static_cast<size_t>(r * t.src_stride + c)]);
        } else {
          CHECK(got == kUntouched);  // past the block: left alone
        }
      }
    }
  }
  TransposeBlockScalarForTesting(false);
}

}  // namespace
}  // namespace memopt
