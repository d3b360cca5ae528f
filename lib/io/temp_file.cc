#include "io/temp_file.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memopt::io {

namespace {

constexpr size_t kBuffer = 1 << 20;

/// Open temporaries, fixed-size so that the signal handler needs no allocation or lock. A slot
/// is claimed (state 1), filled, then published (state 2); only published slots are unlinked.
struct Slot {
  std::atomic<int> state{0};
  char path[4096];
};
std::array<Slot, 32> g_slots;

int Claim(const std::string& path) {
  if (path.size() >= sizeof(Slot::path)) return -1;
  for (size_t i = 0; i < g_slots.size(); ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return static_cast<int>(i);
    }
  }
  return -1;  // more than 32 at once: still written, just not cleaned up on a signal
}

void Release(int slot) {
  if (slot >= 0) g_slots[static_cast<size_t>(slot)].state.store(0);
}

/// 0666 minus the process's umask: what a new file created with open(2) gets.
mode_t NewFileMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void RemoveOpenTempFiles() {
  for (Slot& s : g_slots) {
    if (s.state.load() == 2) ::unlink(s.path);
  }
}

std::filesystem::path OutputFolder(const std::string& output_path) {
  const std::filesystem::path path(output_path);
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

Expected<OutputTarget> ResolveOutputTarget(const std::string& output_path) {
  namespace fs = std::filesystem;
  OutputTarget target;
  if (output_path == "-") {
    target.kind = OutputTarget::Kind::kStdout;
    target.path = "-";
    return target;
  }
  const std::string prefix = "cannot write '" + output_path + "': ";
  if (output_path.empty()) return UsageError("output path is empty");
  std::string path = output_path;
  for (int hops = 0;; ++hops) {
    if (hops > 40) return InvalidInput(prefix + "too many levels of symbolic links");
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) return InvalidInput(prefix + std::strerror(errno));
      if (path.back() == '/') return InvalidInput(prefix + "'" + path + "' names a folder; -o needs a file name");
      target.kind = OutputTarget::Kind::kNewFile;
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4095) + 1, '\0');
      const ssize_t n = ::readlink(path.c_str(), link.data(), link.size());
      if (n < 0) return InvalidInput(prefix + "cannot read symlink '" + path + "': " + std::strerror(errno));
      link.resize(static_cast<size_t>(n));
      const fs::path next(link);
      path = next.is_absolute() ? link : (OutputFolder(path) / next).string();
      continue;
    }
    if (S_ISDIR(st.st_mode)) return InvalidInput(prefix + "is a directory; -o needs a file name");
    target.kind = S_ISREG(st.st_mode) ? OutputTarget::Kind::kRegular : OutputTarget::Kind::kStream;
    break;
  }
  target.path = path;
  return target;
}

Status CheckOutputPath(const std::string& output_path, const std::string& input_path) {
  namespace fs = std::filesystem;
  MEMOPT_ASSIGN_OR_RETURN(const OutputTarget target, ResolveOutputTarget(output_path));
  std::error_code ec;
  if (!input_path.empty() && target.kind == OutputTarget::Kind::kRegular && fs::equivalent(target.path, input_path, ec)) {
    return UsageError("output '" + output_path + "' is the input model; choose another -o path");
  }
  if (target.direct()) return Status::Ok();
  const fs::path dir = OutputFolder(target.path);
  const std::string prefix = "cannot write '" + output_path + "': ";
  if (!fs::exists(dir, ec)) return InvalidInput(prefix + "folder '" + dir.string() + "' does not exist");
  if (!fs::is_directory(dir, ec)) return InvalidInput(prefix + "'" + dir.string() + "' is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) {
    return InvalidInput(prefix + "folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

Expected<std::filesystem::path> ExternalDataFolder(const std::string& output_path) {
  MEMOPT_ASSIGN_OR_RETURN(const OutputTarget target, ResolveOutputTarget(output_path));
  if (target.direct()) {
    return InvalidInput("cannot write '" + output_path +
                        "': the model keeps weights in external data files, which need a folder beside the "
                        "model; give -o a file path");
  }
  return OutputFolder(output_path);
}

TempFileSink::~TempFileSink() {
  if (fd_ >= 0 && kind_ != OutputTarget::Kind::kStdout) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  Release(slot_);
}

Status TempFileSink::Error() const {
  const int err = errno;
  if (source_check_) {
    Status source = source_check_();
    if (!source.ok()) return source;
  }
  return InvalidInput("cannot write '" + target_ + "': " + std::strerror(err));
}

Status TempFileSink::Open(const std::string& target) {
  namespace fs = std::filesystem;
  target_ = target;
  MEMOPT_ASSIGN_OR_RETURN(const OutputTarget resolved, ResolveOutputTarget(target));
  kind_ = resolved.kind;
  final_path_ = resolved.path;
  if (kind_ == OutputTarget::Kind::kStdout) {
    std::fflush(stdout);  // what the caller printed with stdio comes first
    fd_ = STDOUT_FILENO;
    return Status::Ok();
  }
  if (kind_ == OutputTarget::Kind::kStream) {
    // A FIFO blocks here until a reader opens it, as `> fifo` does in a shell.
    fd_ = ::open(final_path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) return Error();
    return Status::Ok();
  }
  if (kind_ == OutputTarget::Kind::kRegular) {
    struct stat st {};
    if (::stat(final_path_.c_str(), &st) == 0) keep_mode_ = static_cast<int>(st.st_mode & 07777);
  }
  const fs::path path(final_path_);
  const fs::path dir = OutputFolder(final_path_);
  // Built with append: GCC 12 warns (-Wrestrict, a false positive) on the operator+ chain at -O3.
  std::string hidden(".");
  hidden.append(path.filename().string()).append(".tmp.XXXXXX");
  std::string tmpl = (dir / hidden).string();
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) {
    return InvalidInput("cannot write '" + target_ + "': cannot create a file in folder '" + dir.string() +
                        "' (" + std::strerror(errno) + ")");
  }
  tmp_ = tmpl;
  slot_ = Claim(tmp_);
  return Status::Ok();
}

Status TempFileSink::Write(const void* data, uint64_t size) {
  const char* p = static_cast<const char*>(data);
  written_ += size;
  if (buffer_.size() + size < kBuffer) {
    buffer_.append(p, size);
    return Status::Ok();
  }
  MEMOPT_RETURN_IF_ERROR(Flush());
  return WriteRaw(p, size);
}

Status TempFileSink::Flush() {
  Status s = WriteRaw(buffer_.data(), buffer_.size());
  buffer_.clear();
  return s;
}

Status TempFileSink::WriteRaw(const char* p, uint64_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, std::min<uint64_t>(size, 1u << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error();
    }
    p += n;
    size -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status TempFileSink::Skip(uint64_t size) {
  if (size == 0) return Status::Ok();
  if (kind_ == OutputTarget::Kind::kStream || kind_ == OutputTarget::Kind::kStdout) {
    // Streams cannot seek: the hole is written as zeros.
    static const std::string kZeros(1 << 16, '\0');
    while (size > 0) {
      const uint64_t n = std::min<uint64_t>(size, kZeros.size());
      MEMOPT_RETURN_IF_ERROR(Write(kZeros.data(), n));
      size -= n;
    }
    return Status::Ok();
  }
  MEMOPT_RETURN_IF_ERROR(Flush());
  if (::lseek(fd_, static_cast<off_t>(size), SEEK_CUR) < 0) return Error();
  written_ += size;
  return Status::Ok();
}

Status TempFileSink::Commit() {
  MEMOPT_RETURN_IF_ERROR(Flush());
  if (kind_ == OutputTarget::Kind::kStdout) {
    fd_ = -1;
    return Status::Ok();
  }
  if (kind_ == OutputTarget::Kind::kStream) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Error();
    return Status::Ok();
  }
  // A trailing hole: lseek alone does not extend the file.
  if (::ftruncate(fd_, static_cast<off_t>(written_)) != 0) return Error();
  ::fchmod(fd_, keep_mode_ >= 0 ? static_cast<mode_t>(keep_mode_) : NewFileMode());
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return Error();
  }
  fd_ = -1;
  if (std::rename(tmp_.c_str(), final_path_.c_str()) != 0) return Error();
  tmp_.clear();
  Release(slot_);
  slot_ = -1;
  return Status::Ok();
}

}  // namespace memopt::io
