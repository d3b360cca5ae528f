#include "io/atomic_write.h"

#include <filesystem>

#include "io/temp_file.h"

namespace memopt {

namespace fs = std::filesystem;

Status WriteFileAtomically(const std::string& path, std::string_view content,
                           const std::string& protected_path) {
  if (path.empty()) return UsageError("output path is empty");
  std::error_code ec;
  if (!protected_path.empty() && fs::exists(path, ec) && fs::equivalent(path, protected_path, ec)) {
    return UsageError("output '" + path + "' is the input model; choose another -o path");
  }
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    return InvalidInput("cannot write '" + path + "': folder '" + dir.string() + "' does not exist");
  }
  io::TempFileSink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(path));
  MEMOPT_RETURN_IF_ERROR(sink.Write(content));
  MEMOPT_RETURN_IF_ERROR(sink.Commit());
  return Status::Ok();
}

}  // namespace memopt
