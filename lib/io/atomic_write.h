// Writes a whole file or nothing: content goes to a temporary file in the target's folder, which
// is renamed over the target only after it was written and flushed. A failure leaves no partial
// file behind.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace memopt {

/// Writes `content` to `path` atomically. Refuses to overwrite `protected_path` (the input model)
/// when the two name the same file. Errors name the path and the reason.
Status WriteFileAtomically(const std::string& path, std::string_view content,
                           const std::string& protected_path = "");

}  // namespace memopt
