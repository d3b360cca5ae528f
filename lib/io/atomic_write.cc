#include "io/atomic_write.h"

#include "io/temp_file.h"

namespace memopt {

Status WriteFileAtomically(const std::string& path, std::string_view content,
                           const std::string& protected_path) {
  MEMOPT_RETURN_IF_ERROR(io::CheckOutputPath(path, protected_path));
  io::TempFileSink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(path));
  MEMOPT_RETURN_IF_ERROR(sink.Write(content));
  MEMOPT_RETURN_IF_ERROR(sink.Commit());
  return Status::Ok();
}

}  // namespace memopt
