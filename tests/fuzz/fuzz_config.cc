// libFuzzer target: the mem_opt.json config parser (JSON array form and the inline string form).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)memopt::ParseMemoryOptConfig(text, "fuzz.json");
  (void)memopt::ParseInlineConfig(text, "fuzz");
  return 0;
}
