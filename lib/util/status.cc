#include "util/status.h"

#include <cstdio>
#include <cstdlib>

namespace memopt::internal {

void CheckFailed(const char* cond, const char* file, int line) {
  // An invariant failure is a bug in memopt, not a user error; abort so it is never mistaken for
  // a clean exit. This is the one place the library writes to stderr.
  std::fprintf(stderr, "memopt: internal error: check failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}

}  // namespace memopt::internal
