// Ranges and strided blocks of tensors as float/double, and back, for every floating type.
#include "exec/kernels/float_range.h"

#include <catch2/catch.hpp>
#include <vector>

namespace memopt {
namespace {

Tensor Iota(DataType t, std::vector<int64_t> shape) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.SetFromDouble(i, static_cast<double>(i) / 4.0 - 3.0);
  return x;
}

TEST_CASE("float range: ranges read and stored in every floating type", "[exec][float_range]") {
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16, DataType::kInt32}) {
    INFO(DataTypeName(t));
    const Tensor x = Iota(t, {3, 20});
    std::vector<float> f(7);
    std::vector<double> d(7);
    const float* pf = ReadRange<float>(x, 11, 7, f.data());
    const double* pd = ReadRange<double>(x, 11, 7, d.data());
    CHECK((pf == f.data()) == (t != DataType::kFloat));  // float tensors are read in place
    CHECK((pd == d.data()) == (t != DataType::kDouble));
    for (int64_t i = 0; i < 7; ++i) {
      CHECK(pf[i] == static_cast<float>(x.GetAsDouble(11 + i)));
      CHECK(pd[i] == x.GetAsDouble(11 + i));
    }
    Tensor y(t, {3, 20});
    const std::vector<float> v = {1.5f, -2.25f, 3.0f};
    StoreRange(v.data(), 3, y, 40);
    CHECK(y.GetAsDouble(39) == 0.0);
    CHECK(y.GetAsDouble(40) == (t == DataType::kInt32 ? 1.0 : 1.5));
    CHECK(y.GetAsDouble(41) == (t == DataType::kInt32 ? -2.0 : -2.25));
    CHECK(y.GetAsDouble(42) == 3.0);
    CHECK(y.GetAsDouble(43) == 0.0);
  }
}

TEST_CASE("float range: strided blocks and their size", "[exec][float_range]") {
  const Tensor x = Iota(DataType::kFloat16, {2, 3, 5});  // [N, C, D]: block of b = 1, positions 2..3
  std::vector<float> block(6);
  ConvertBlock(x, 1 * 15 + 2, 3, 5, 2, block.data());
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < 2; ++j) CHECK(block[k * 2 + j] == static_cast<float>(x.GetAsDouble(15 + k * 5 + 2 + j)));
  CHECK(BlockPositions(300, 260) == 218);
  CHECK(BlockPositions(3, 5) == 5);
  CHECK(BlockPositions(100000, 9) == 1);
  CHECK(BlockPositions(0, 9) == 9);
}

}  // namespace
}  // namespace memopt
