#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memopt::io {

MappedFile::~MappedFile() {
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
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ == 0) {
    close(fd);
    return Status::Ok();
  }
  void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);  // the mapping stays valid without the descriptor
  if (p == MAP_FAILED) {
    size_ = 0;
    return InvalidInput(std::string("cannot map the model file: ") + std::strerror(err));
  }
  data_ = p;
  // The walk jumps over weight blobs; without this hint the kernel's read-around would pull in
  // megabytes of weights around every initializer header it touches.
  madvise(p, size_, MADV_RANDOM);
  return Status::Ok();
}

}  // namespace memopt::io
