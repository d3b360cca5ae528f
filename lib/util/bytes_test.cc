#include <catch2/catch.hpp>

#include "util/bytes.h"

namespace memopt {
namespace {

TEST_CASE("HumanBytes uses IEC units with two decimals", "[bytes]") {
  CHECK(HumanBytes(0) == "0 B");
  CHECK(HumanBytes(512) == "512 B");
  CHECK(HumanBytes(1023) == "1023 B");
  CHECK(HumanBytes(1024) == "1.00 KiB");
  CHECK(HumanBytes(1536) == "1.50 KiB");
  CHECK(HumanBytes(3489660928LL) == "3.25 GiB");
  CHECK(HumanBytes(134217728) == "128.00 MiB");
  CHECK(HumanBytes(1024LL * 1024 - 1) == "1.00 MiB");  // not "1024.00 KiB"
  CHECK(HumanBytes(5LL << 40) == "5.00 TiB");
  CHECK(HumanBytes(-1536) == "-1.50 KiB");
  CHECK(HumanBytes(-5) == "-5 B");
  CHECK(HumanBytes(INT64_MIN) == "-8.00 EiB");
  CHECK(HumanBytes(INT64_MAX) == "8.00 EiB");
}

TEST_CASE("WithThousands groups digits", "[bytes]") {
  CHECK(WithThousands(0) == "0");
  CHECK(WithThousands(999) == "999");
  CHECK(WithThousands(1000) == "1,000");
  CHECK(WithThousands(-1000) == "-1,000");
  CHECK(WithThousands(134217728) == "134,217,728");
  CHECK(WithThousands(INT64_MIN) == "-9,223,372,036,854,775,808");
}

TEST_CASE("ParseSize reads bytes, units and fractions", "[bytes]") {
  auto bytes = [](std::string_view s) {
    auto r = ParseSize(s);
    REQUIRE(r.ok());
    CHECK(!r->is_fraction);
    return r->bytes;
  };
  CHECK(bytes("123") == 123);
  CHECK(bytes("0") == 0);
  CHECK(bytes("123B") == 123);
  CHECK(bytes("12GiB") == 12LL << 30);
  CHECK(bytes("12gib") == 12LL << 30);
  CHECK(bytes("12 GiB") == 12LL << 30);
  CHECK(bytes("1.5G") == 3LL << 29);
  CHECK(bytes("2k") == 2048);
  CHECK(bytes("2KiB") == 2048);
  CHECK(bytes("800MB") == 800000000);
  CHECK(bytes("1GB") == 1000000000);
  CHECK(bytes("2TB") == 2000000000000LL);
  CHECK(bytes("1TiB") == 1LL << 40);
  CHECK(bytes("0.5KB") == 500);
  CHECK(bytes("9223372036854775807") == INT64_MAX);

  auto frac = ParseSize("0.6");
  REQUIRE(frac.ok());
  CHECK(frac->is_fraction);
  CHECK(frac->fraction == Approx(0.6));
  CHECK(ParseSize("1.0")->is_fraction);
  CHECK(ParseSize(".25")->fraction == Approx(0.25));
}

TEST_CASE("ParseSize errors", "[bytes]") {
  const std::string expected =
      "invalid size 'x': expected bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB) or a fraction such as 0.6";
  auto r = ParseSize("x");
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::kUsage);
  CHECK(r.status().message() == expected);
  for (const char* bad : {"", "-5", "1.5", "0.0", "12XB", "1..2", "GiB", "1.5B", "12 G iB", "1e9"}) {
    INFO(bad);
    CHECK(!ParseSize(bad).ok());
  }
  auto big = ParseSize("9223372036854775808");
  REQUIRE(!big.ok());
  CHECK(big.status().message() == "size '9223372036854775808' does not fit in 64 bits");
  CHECK(!ParseSize("9000000TiB").ok());
}

}  // namespace
}  // namespace memopt
