#include "util/bytes.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace memopt {
namespace {

uint64_t Magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status InvalidSize(std::string_view text) {
  return UsageError("invalid size '" + std::string(text) +
                    "': expected bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB) or a fraction such as 0.6");
}

/// Multiplier for a lower-cased unit; 0 when the unit is unknown.
double UnitMultiplier(const std::string& unit) {
  static const char* const kPrefixes = "kmgt";
  if (unit.empty() || unit == "b") return 1;
  size_t k = std::string_view(kPrefixes).find(unit[0]);
  if (k == std::string_view::npos) return 0;
  std::string rest = unit.substr(1);
  double base;
  if (rest.empty() || rest == "i" || rest == "ib") {
    base = 1024;
  } else if (rest == "b") {
    base = 1000;
  } else {
    return 0;
  }
  return std::pow(base, static_cast<double>(k + 1));
}

}  // namespace

std::string HumanBytes(int64_t bytes) {
  std::string sign = bytes < 0 ? "-" : "";
  uint64_t m = Magnitude(bytes);
  if (m < 1024) return sign + std::to_string(m) + " B";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(m) / 1024.0;
  size_t unit = 0;
  // Move up a unit also when rounding to two decimals would print "1024.00".
  while (unit + 1 < std::size(kUnits) && value >= 1024.0 - 0.005) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", value, kUnits[unit]);
  return sign + buf;
}

std::string WithThousands(int64_t v) {
  std::string digits = std::to_string(Magnitude(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

Expected<SizeSpec> ParseSize(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  size_t i = 0, dots = 0, digits = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
    (s[i] == '.' ? dots : digits)++;
    ++i;
  }
  if (digits == 0 || dots > 1) return InvalidSize(text);
  std::string number(s.substr(0, i));
  std::string_view unit_text = s.substr(i);
  while (!unit_text.empty() && unit_text.front() == ' ') unit_text.remove_prefix(1);
  std::string unit = Lower(unit_text);
  double multiplier = UnitMultiplier(unit);
  if (multiplier == 0) return InvalidSize(text);

  SizeSpec spec;
  if (unit.empty() && dots == 1) {
    double f = std::strtod(number.c_str(), nullptr);
    if (!(f > 0.0 && f <= 1.0)) return InvalidSize(text);
    spec.is_fraction = true;
    spec.fraction = f;
    return spec;
  }
  if (dots == 0 && multiplier == 1) {
    // Plain integers are parsed exactly.
    int64_t v = 0;
    for (char c : number) {
      if (__builtin_mul_overflow(v, int64_t{10}, &v) || __builtin_add_overflow(v, int64_t{c - '0'}, &v)) {
        return UsageError("size '" + std::string(text) + "' does not fit in 64 bits");
      }
    }
    spec.bytes = v;
    return spec;
  }
  if (multiplier == 1) return InvalidSize(text);  // fractional bytes ("1.5B")
  long double value = std::strtold(number.c_str(), nullptr) * static_cast<long double>(multiplier);
  value = std::round(value);
  if (!(value < 9223372036854775808.0L)) return UsageError("size '" + std::string(text) + "' does not fit in 64 bits");
  spec.bytes = static_cast<int64_t>(value);
  return spec;
}

}  // namespace memopt
