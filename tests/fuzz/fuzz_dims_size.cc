// libFuzzer target: the --dims parser and the size parser (--budget, --fail-above).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sym/sym_expr.h"
#include "util/bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)memopt::DimBindings::Parse(text);
  (void)memopt::ParseSize(text);
  return 0;
}
