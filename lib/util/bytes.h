// Byte counts for humans: IEC formatting, thousands separators, and parsing of size arguments
// such as `--budget 12GiB` or `--budget 0.6`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace memopt {

/// IEC units with two decimals: "0 B", "512 B", "1.50 KiB", "3.25 GiB"; negative values get a
/// leading '-'. Values below 1024 print as plain bytes.
std::string HumanBytes(int64_t bytes);

/// Decimal digits grouped by thousands: "134,217,728", "-1,000", "0".
std::string WithThousands(int64_t v);

/// A parsed size argument: either an absolute byte count or a fraction of a reference size
/// (the unoptimized peak).
struct SizeSpec {
  bool is_fraction = false;
  int64_t bytes = 0;      ///< when !is_fraction
  double fraction = 0.0;  ///< when is_fraction, in (0, 1]
};

/// Parses a size argument. Accepted forms (units are case-insensitive, a space before the unit is
/// allowed, the number may have a decimal part when a unit is given):
///   "123", "123B"                  bytes
///   "1.5K", "12G", "2KiB", "12GiB" powers of 1024 (K/M/G/T and KiB/MiB/GiB/TiB)
///   "800KB", "800MB", "1GB", "2TB"  powers of 1000
///   "0.6"                          a plain number in (0, 1] containing '.' is a fraction of the peak
/// The byte count is rounded to the nearest integer. Errors are usage errors quoting the text.
Expected<SizeSpec> ParseSize(std::string_view text);

}  // namespace memopt
