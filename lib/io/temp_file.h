// An output written the way GNU tools write theirs (docs/cli.md, "Output files"):
//   * a regular file or a new path is written through a temporary beside the file it finally
//     names: Open() creates ".<name>.tmp.XXXXXX" in that folder, Commit() flushes it and renames
//     it over the file (keeping an existing file's mode); destroying the sink before Commit()
//     removes the temporary;
//   * a symlink is followed (to any depth): the file it points to is replaced, the link stays;
//   * "-" (standard output), FIFOs, character and block devices and sockets are written directly
//     (nothing is renamed over them), so `-o /dev/null` or `-o fifo` keep what they are;
//   * every write and close error is reported, naming the path as the user gave it.
// While open, a temporary is listed in a process-wide registry so that a signal handler (the
// CLI's Ctrl-C handler) can remove it: an interrupted write leaves neither a partial target nor a
// stray temporary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace memopt::io {

/// Where an output path leads once symlinks are followed.
struct OutputTarget {
  enum class Kind {
    kNewFile,   ///< nothing there yet: created through a temporary
    kRegular,   ///< an existing regular file: replaced through a temporary
    kStream,    ///< FIFO, character/block device or socket: written directly
    kStdout,    ///< "-": standard output
  };
  Kind kind = Kind::kNewFile;
  std::string path;  ///< the file finally written (symlinks resolved; "-" for stdout)
  bool direct() const { return kind == Kind::kStream || kind == Kind::kStdout; }
};

/// Follows `output_path` through symlinks. Errors (kInvalidInput) name the path: a directory
/// ("is a directory"), a path ending in '/', a symlink loop, a folder that does not exist.
Expected<OutputTarget> ResolveOutputTarget(const std::string& output_path);

class TempFileSink {
 public:
  TempFileSink() = default;
  TempFileSink(const TempFileSink&) = delete;
  TempFileSink& operator=(const TempFileSink&) = delete;
  ~TempFileSink();

  /// Opens `target` as OutputTarget describes: a temporary beside the resolved file, or the
  /// stream itself (errors name the target and the reason).
  Status Open(const std::string& target);
  /// Buffered write; errors name the target.
  Status Write(const void* data, uint64_t size);
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  /// Leaves `size` zero bytes as a hole (sparse where the file system allows): for copying sparse
  /// files without filling the disk.
  Status Skip(uint64_t size);
  /// Regular targets: flushes, fsyncs and renames the temporary over the resolved file (an
  /// existing file keeps its mode, a new one gets 0666 minus the umask). Direct targets: flushes
  /// and closes (stdout is flushed, not closed).
  Status Commit();
  uint64_t written() const { return written_; }
  /// For copies out of a mapped file: when a write fails (EFAULT from a source page that vanished),
  /// `check` is asked first, and its error (e.g. "changed while reading") is returned instead.
  void ExplainWriteErrorsWith(std::function<Status()> check) { source_check_ = std::move(check); }

 private:
  Status Flush();
  Status WriteRaw(const char* p, uint64_t size);
  Status Error() const;

  std::string target_, tmp_, final_path_;
  std::string buffer_;
  OutputTarget::Kind kind_ = OutputTarget::Kind::kNewFile;
  std::function<Status()> source_check_;
  int keep_mode_ = -1;  ///< an existing file's permission bits, or -1
  int fd_ = -1;
  int slot_ = -1;
  uint64_t written_ = 0;
};

/// The folder an output path lands in ("." for a bare file name), as given (symlinks not
/// followed): where a model's external data files go beside it.
std::filesystem::path OutputFolder(const std::string& output_path);

/// Checks an output path before any work is done: not empty (usage error), not the file at
/// `input_path` (usage error, "choose another -o path"), not a directory, and for files the
/// folder of the resolved file exists and is writable.
Status CheckOutputPath(const std::string& output_path, const std::string& input_path);

/// For model writers: the folder external data files go to, or an error when the output is a
/// stream ("-", FIFO, device), which has no folder to put them in.
Expected<std::filesystem::path> ExternalDataFolder(const std::string& output_path);

/// Removes every temporary still open. Async-signal-safe (unlink only): for signal handlers.
void RemoveOpenTempFiles();

}  // namespace memopt::io
