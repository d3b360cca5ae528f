// A read-only memory map of a whole file, unmapped on destruction. The loader keeps the mapping
// only while it walks the model, so pages of weights it skips are never read from disk.
//
// A mapped file that shrinks while it is read (truncated, or rewritten in place by `cp`) would
// kill the process with SIGBUS on the first page past its new end. Every mapping is therefore
// registered with a process-wide SIGBUS handler (installed on the first Open): a fault inside a
// registered mapping maps a page of zeros over the missing page and marks the mapping as damaged,
// so the read goes on and the owner reports "changed while reading" through Intact(). Faults
// anywhere else keep their default action.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace memopt::io {

/// Identity of a file's contents at one moment: a file replaced or rewritten since has another.
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

/// The stamp of the file at `path` now (errors name the reason).
Expected<FileStamp> StampFile(const std::string& path);

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
  /// The file's stamp when it was mapped.
  const FileStamp& stamp() const { return stamp_; }

  /// Ok while everything read from the mapping is what the file held when it was mapped: no page
  /// went missing (SIGBUS, see above) and the file at the path has the same stamp. Otherwise an
  /// error "changed while reading". Call it after reading, before trusting what was read.
  Status Intact() const;

 private:
  void* data_ = nullptr;
  uint64_t size_ = 0;
  int slot_ = -1;
  std::string path_;
  FileStamp stamp_;
};

/// The error for a file that changed while memopt read it.
Status FileChangedError(const std::string& path);

}  // namespace memopt::io
