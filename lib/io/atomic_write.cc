#include "io/atomic_write.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // Built with append: GCC 12 warns (-Wrestrict, a false positive) on the operator+ chain at -O3.
  std::string hidden_name(".");
  hidden_name.append(target.filename().string()).append(".tmp.XXXXXX");
  std::string tmpl = (dir / hidden_name).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) {
    return InvalidInput("cannot write '" + path + "': " + std::strerror(errno));
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmpl.c_str());
      return InvalidInput("cannot write '" + path + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    return InvalidInput("cannot write '" + path + "': " + why);
  }
  ::chmod(tmpl.c_str(), 0644);
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    return InvalidInput("cannot write '" + path + "': " + why);
  }
  return Status::Ok();
}

}  // namespace memopt
