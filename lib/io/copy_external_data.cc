#include "io/copy_external_data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "io/temp_file.h"

namespace memopt::io {

namespace fs = std::filesystem;

namespace {

/// Copies `from` to `to` through a temporary (no partial file on error or Ctrl-C), keeping holes:
/// a 2.5 GB sparse weight file costs only its data blocks. Falls back to plain reads where the
/// file system does not report holes.
Status CopySparse(const fs::path& from, const fs::path& to) {
  const std::string what = "cannot copy external data '" + from.string() + "' to '" + to.string() + "': ";
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return InvalidInput(what + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{in};
  const off_t size = ::lseek(in, 0, SEEK_END);
  if (size < 0) return InvalidInput(what + std::strerror(errno));
  TempFileSink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(to.string()));
  std::string buffer(1 << 20, '\0');
  off_t pos = 0;
  while (pos < size) {
    off_t data = ::lseek(in, pos, SEEK_DATA);
    if (data < 0) data = errno == ENXIO ? size : pos;  // ENXIO: only a hole is left
    MEMOPT_RETURN_IF_ERROR(sink.Skip(static_cast<uint64_t>(data - pos)));
    pos = data;
    if (pos >= size) break;
    off_t hole = ::lseek(in, pos, SEEK_HOLE);
    if (hole < 0 || hole > size) hole = size;
    while (pos < hole) {
      const auto want = static_cast<size_t>(std::min<off_t>(hole - pos, static_cast<off_t>(buffer.size())));
      const ssize_t n = ::pread(in, buffer.data(), want, pos);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return InvalidInput(what + (n < 0 ? std::strerror(errno) : "file shrank while copying"));
      MEMOPT_RETURN_IF_ERROR(sink.Write(buffer.data(), static_cast<uint64_t>(n)));
      pos += n;
    }
  }
  return sink.Commit();
}

}  // namespace

Status CopyExternalDataFiles(const Model& model, const std::string& output_path, std::vector<std::string>* copied) {
  std::set<std::string> locations;
  for (const Value& v : model.graph.values) {
    if (v.initializer && v.initializer->storage == InitializerInfo::Storage::kExternal) {
      locations.insert(v.initializer->external_location);
    }
  }
  if (locations.empty()) return Status::Ok();
  MEMOPT_ASSIGN_OR_RETURN(const fs::path out_dir, ExternalDataFolder(output_path));
  for (const std::string& location : locations) {
    const fs::path from = fs::path(model.base_dir) / location;
    const fs::path to = out_dir / location;
    std::error_code ec;
    if (fs::exists(to, ec) && fs::equivalent(from, to, ec)) continue;
    if (to.has_parent_path()) fs::create_directories(to.parent_path(), ec);
    MEMOPT_RETURN_IF_ERROR(CopySparse(from, to));
    copied->push_back(location);
  }
  return Status::Ok();
}

}  // namespace memopt::io
