#include "io/temp_file.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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

Status CheckOutputPath(const std::string& output_path, const std::string& input_path) {
  namespace fs = std::filesystem;
  if (output_path.empty()) return UsageError("output path is empty");
  std::error_code ec;
  if (!input_path.empty() && fs::exists(output_path, ec) && fs::equivalent(output_path, input_path, ec)) {
    return UsageError("output '" + output_path + "' is the input model; choose another -o path");
  }
  const fs::path dir = OutputFolder(output_path);
  const std::string prefix = "cannot write '" + output_path + "': ";
  if (!fs::exists(dir, ec)) return InvalidInput(prefix + "folder '" + dir.string() + "' does not exist");
  if (!fs::is_directory(dir, ec)) return InvalidInput(prefix + "'" + dir.string() + "' is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) {
    return InvalidInput(prefix + "folder '" + dir.string() + "' is not writable (" + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

TempFileSink::~TempFileSink() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  Release(slot_);
}

Status TempFileSink::Error() const {
  return InvalidInput("cannot write '" + target_ + "': " + std::strerror(errno));
}

Status TempFileSink::Open(const std::string& target) {
  namespace fs = std::filesystem;
  target_ = target;
  const fs::path path(target);
  const fs::path dir = OutputFolder(target);
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
  MEMOPT_RETURN_IF_ERROR(Flush());
  if (::lseek(fd_, static_cast<off_t>(size), SEEK_CUR) < 0) return Error();
  written_ += size;
  return Status::Ok();
}

Status TempFileSink::Commit() {
  MEMOPT_RETURN_IF_ERROR(Flush());
  // A trailing hole: lseek alone does not extend the file.
  if (::ftruncate(fd_, static_cast<off_t>(written_)) != 0) return Error();
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    return Error();
  }
  fd_ = -1;
  ::chmod(tmp_.c_str(), 0644);
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) return Error();
  tmp_.clear();
  Release(slot_);
  slot_ = -1;
  return Status::Ok();
}

}  // namespace memopt::io
