// A read-only memory map of a whole file, unmapped on destruction. The loader keeps the mapping
// only while it walks the model, so pages of weights it skips are never read from disk.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace memopt::io {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// Maps `path`. An empty file maps to size() == 0 and data() == nullptr (not an error here).
  Status Open(const std::string& path);

  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  uint64_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace memopt::io
