#include "io/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace memopt::io {

namespace {

/// Live mappings, fixed-size so that the signal handler needs no allocation or lock. A slot is
/// claimed (state 1), filled, then published (state 2); the handler only reads published slots.
struct MappingSlot {
  std::atomic<int> state{0};
  std::atomic<uintptr_t> begin{0}, end{0};
  std::atomic<int> damaged{0};
};
std::array<MappingSlot, 64> g_mappings;
struct sigaction g_previous_sigbus {};

int ClaimMapping(const void* data, uint64_t size) {
  for (size_t i = 0; i < g_mappings.size(); ++i) {
    int expected = 0;
    if (g_mappings[i].state.compare_exchange_strong(expected, 1)) {
      g_mappings[i].begin.store(reinterpret_cast<uintptr_t>(data));
      g_mappings[i].end.store(reinterpret_cast<uintptr_t>(data) + size);
      g_mappings[i].damaged.store(0);
      g_mappings[i].state.store(2);
      return static_cast<int>(i);
    }
  }
  return -1;  // more than 64 at once: still mapped, only without the SIGBUS guard
}

extern "C" void OnSigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (MappingSlot& slot : g_mappings) {
    if (slot.state.load() != 2 || address < slot.begin.load() || address >= slot.end.load()) continue;
    // The file shrank under the mapping: put a page of zeros where the data was and let the read
    // go on; the owner sees `damaged` and reports the change (MappedFile::Intact).
    const long page = ::sysconf(_SC_PAGESIZE);
    const uintptr_t start = address & ~static_cast<uintptr_t>(page - 1);
    void* p = ::mmap(reinterpret_cast<void*>(start), static_cast<size_t>(page), PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      slot.damaged.store(1);
      return;
    }
    break;
  }
  // Not ours (or the page could not be replaced): the previous disposition decides.
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) != 0 && g_previous_sigbus.sa_sigaction != nullptr) {
    g_previous_sigbus.sa_sigaction(signal, info, context);
    return;
  }
  if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN &&
      g_previous_sigbus.sa_handler != nullptr) {
    g_previous_sigbus.sa_handler(signal);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);  // returning re-executes the access, which now ends the process
}

void InstallSigbusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

FileStamp StampOf(const struct stat& st) {
  FileStamp s;
  s.device = static_cast<uint64_t>(st.st_dev);
  s.inode = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

}  // namespace

Expected<FileStamp> StampFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return InvalidInput(std::string("cannot stat the file: ") + std::strerror(errno));
  return StampOf(st);
}

Status FileChangedError(const std::string& path) {
  return InvalidInput("the file '" + path + "' changed while memopt read it (truncated, rewritten or replaced); "
                      "run again once it is complete");
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) g_mappings[static_cast<size_t>(slot_)].state.store(0);
  if (data_ != nullptr) munmap(data_, size_);
}

Status MappedFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InvalidInput(std::string("cannot open the model file: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return InvalidInput(std::string("cannot read the model file: ") + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return InvalidInput("is a directory, not an ONNX model file");
  }
  path_ = path;
  stamp_ = StampOf(st);
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ == 0) {
    close(fd);
    return Status::Ok();
  }
  InstallSigbusHandler();
  void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);  // the mapping stays valid without the descriptor
  if (p == MAP_FAILED) {
    size_ = 0;
    return InvalidInput(std::string("cannot map the model file: ") + std::strerror(err));
  }
  data_ = p;
  slot_ = ClaimMapping(p, size_);
  // The walk jumps over weight blobs; without this hint the kernel's read-around would pull in
  // megabytes of weights around every initializer header it touches.
  madvise(p, size_, MADV_RANDOM);
  return Status::Ok();
}

Status MappedFile::Intact() const {
  if (path_.empty()) return Status::Ok();
  if (slot_ >= 0 && g_mappings[static_cast<size_t>(slot_)].damaged.load() != 0) return FileChangedError(path_);
  auto now = StampFile(path_);
  if (!now.ok() || !(*now == stamp_)) return FileChangedError(path_);
  return Status::Ok();
}

}  // namespace memopt::io
