// A file written through a temporary beside its target: Open() creates ".<name>.tmp.XXXXXX" in the
// target's folder, Commit() flushes it and renames it over the target; destroying it before
// Commit() removes the temporary. While open, the temporary is listed in a process-wide registry
// so that a signal handler (the CLI's Ctrl-C handler) can remove it: an interrupted write leaves
// neither a partial target nor a stray temporary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/status.h"

namespace memopt::io {

class TempFileSink {
 public:
  TempFileSink() = default;
  TempFileSink(const TempFileSink&) = delete;
  TempFileSink& operator=(const TempFileSink&) = delete;
  ~TempFileSink();

  /// Creates the temporary for `target` (errors name the target and the reason).
  Status Open(const std::string& target);
  /// Buffered write; errors name the target.
  Status Write(const void* data, uint64_t size);
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  /// Leaves `size` zero bytes as a hole (sparse where the file system allows): for copying sparse
  /// files without filling the disk.
  Status Skip(uint64_t size);
  /// Flushes, fsyncs and renames the temporary over the target (mode 0644).
  Status Commit();
  uint64_t written() const { return written_; }

 private:
  Status Flush();
  Status WriteRaw(const char* p, uint64_t size);
  Status Error() const;

  std::string target_, tmp_;
  std::string buffer_;
  int fd_ = -1;
  int slot_ = -1;
  uint64_t written_ = 0;
};

/// The folder an output path lands in ("." for a bare file name).
std::filesystem::path OutputFolder(const std::string& output_path);

/// Checks an output path before any work is done: not empty (usage error), not the file at
/// `input_path` (usage error, "choose another -o path"), and its folder exists and is writable.
Status CheckOutputPath(const std::string& output_path, const std::string& input_path);

/// Removes every temporary still open. Async-signal-safe (unlink only): for signal handlers.
void RemoveOpenTempFiles();

}  // namespace memopt::io
