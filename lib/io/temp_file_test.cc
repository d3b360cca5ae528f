#include "io/temp_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include <catch2/catch.hpp>

namespace memopt::io {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("memopt_temp_file_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t Entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST_CASE("temp file: committed writes appear whole, abandoned ones leave nothing", "[io]") {
  const fs::path dir = Scratch("commit");
  {
    TempFileSink sink;
    REQUIRE(sink.Open((dir / "out.bin").string()).ok());
    REQUIRE(sink.Write("hello ").ok());
    const std::string big(3 << 20, 'x');  // past the buffer: written through
    REQUIRE(sink.Write(big).ok());
    CHECK(Entries(dir) == 1);            // only the hidden temporary
    CHECK_FALSE(fs::exists(dir / "out.bin"));
    REQUIRE(sink.Commit().ok());
    CHECK(sink.written() == 6 + big.size());
  }
  CHECK(fs::file_size(dir / "out.bin") == 6 + (3u << 20));
  CHECK(Entries(dir) == 1);
  {
    TempFileSink sink;
    REQUIRE(sink.Open((dir / "abandoned.bin").string()).ok());
    REQUIRE(sink.Write("partial").ok());
  }
  CHECK(Entries(dir) == 1);  // the abandoned temporary is gone, no target
  TempFileSink bad;
  CHECK(bad.Open((dir / "missing/out.bin").string()).message() ==
        "cannot write '" + (dir / "missing/out.bin").string() + "': cannot create a file in folder '" +
            (dir / "missing").string() + "' (No such file or directory)");
  fs::remove_all(dir);
}

TEST_CASE("temp file: skipped ranges read back as zeros, also at the end", "[io]") {
  const fs::path dir = Scratch("skip");
  const std::string path = (dir / "sparse.bin").string();
  {
    TempFileSink sink;
    REQUIRE(sink.Open(path).ok());
    REQUIRE(sink.Write("ab").ok());
    REQUIRE(sink.Skip(3 << 20).ok());
    REQUIRE(sink.Write("c").ok());
    REQUIRE(sink.Skip(5000).ok());  // a trailing hole still counts in the size
    REQUIRE(sink.Commit().ok());
    CHECK(sink.written() == 2 + (3u << 20) + 1 + 5000);
  }
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(data.size() == 2 + (3u << 20) + 1 + 5000);
  CHECK(data.substr(0, 2) == "ab");
  CHECK(data[2 + (3u << 20)] == 'c');
  CHECK(std::count(data.begin(), data.end(), '\0') == static_cast<std::ptrdiff_t>((3u << 20) + 5000));
  fs::remove_all(dir);
}

TEST_CASE("temp file: output paths are checked before any work", "[io]") {
  const fs::path dir = Scratch("check");
  const std::string input = (dir / "model.onnx").string();
  std::ofstream(input) << "x";
  CHECK(CheckOutputPath((dir / "out.onnx").string(), input).ok());
  CHECK(CheckOutputPath("", input).code() == ErrorCode::kUsage);
  const Status same = CheckOutputPath((dir / "." / "model.onnx").string(), input);
  CHECK(same.code() == ErrorCode::kUsage);
  CHECK(same.message().find("is the input model; choose another -o path") != std::string::npos);
  CHECK(CheckOutputPath((dir / "missing/out.onnx").string(), input).message() ==
        "cannot write '" + (dir / "missing/out.onnx").string() + "': folder '" + (dir / "missing").string() +
            "' does not exist");
  CHECK(CheckOutputPath(input + "/out.onnx", input).message() ==
        "cannot write '" + input + "/out.onnx': '" + input + "' is not a folder");
  if (::geteuid() != 0) {  // root writes anywhere; the folder check means nothing there
    const fs::path ro = dir / "read_only";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(CheckOutputPath((ro / "out.onnx").string(), input).message().find("' is not writable (") !=
          std::string::npos);
    fs::permissions(ro, fs::perms::owner_all);
  }
  // A folder nobody can create files in, even root: the temporary's creation names the reason.
  TempFileSink proc;
  CHECK(proc.Open("/proc/memopt_out.onnx").message().find(
            "cannot write '/proc/memopt_out.onnx': cannot create a file in folder '/proc' (") == 0);
  fs::remove_all(dir);
}

TEST_CASE("temp file: the interrupt cleanup removes open temporaries only", "[io]") {
  const fs::path dir = Scratch("signal");
  TempFileSink done;
  REQUIRE(done.Open((dir / "done.bin").string()).ok());
  REQUIRE(done.Write("done").ok());
  REQUIRE(done.Commit().ok());
  TempFileSink open;
  REQUIRE(open.Open((dir / "open.bin").string()).ok());
  REQUIRE(open.Write("half").ok());
  CHECK(Entries(dir) == 2);
  RemoveOpenTempFiles();  // what the CLI's SIGINT handler calls
  CHECK(Entries(dir) == 1);
  CHECK(fs::exists(dir / "done.bin"));
  fs::remove_all(dir);
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Status WriteWhole(const std::string& path, const std::string& text) {
  TempFileSink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(path));
  MEMOPT_RETURN_IF_ERROR(sink.Write(text));
  return sink.Commit();
}

TEST_CASE("temp file: a symlink is followed, the file it names is replaced and the link kept", "[io]") {
  const fs::path dir = Scratch("symlink");
  fs::create_directories(dir / "real");
  std::ofstream(dir / "real" / "target.json") << "stale";
  fs::permissions(dir / "real" / "target.json", fs::perms(0640));
  fs::create_symlink("real/target.json", dir / "link.json");      // relative to the link's folder
  fs::create_symlink(dir / "link.json", dir / "link2.json");      // a chain, absolute
  REQUIRE(WriteWhole((dir / "link2.json").string(), "fresh").ok());
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(fs::is_symlink(dir / "link2.json"));
  CHECK(ReadAll(dir / "real" / "target.json") == "fresh");
  CHECK(fs::status(dir / "real" / "target.json").permissions() == fs::perms(0640));  // the file's mode is kept
  CHECK(Entries(dir / "real") == 1);  // the temporary was made beside the target, and is gone
  // A dangling symlink creates the file it names.
  fs::create_symlink("real/new.json", dir / "dangling.json");
  REQUIRE(WriteWhole((dir / "dangling.json").string(), "new").ok());
  CHECK(ReadAll(dir / "real" / "new.json") == "new");
  CHECK(fs::is_symlink(dir / "dangling.json"));
  // A loop is an error naming the path.
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  CHECK(CheckOutputPath((dir / "loop_a").string(), "").message() ==
        "cannot write '" + (dir / "loop_a").string() + "': too many levels of symbolic links");
  fs::remove_all(dir);
}

TEST_CASE("temp file: a FIFO is written directly and stays a FIFO", "[io]") {
  const fs::path dir = Scratch("fifo");
  const fs::path fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = ReadAll(fifo); });
  const std::string big(3 << 20, 'y');  // more than the buffer and the pipe hold
  {
    TempFileSink sink;
    REQUIRE(sink.Open(fifo.string()).ok());
    REQUIRE(sink.Write("x").ok());
    REQUIRE(sink.Skip(10).ok());  // no seeking on a pipe: zeros are written
    REQUIRE(sink.Write(big).ok());
    REQUIRE(sink.Commit().ok());
  }
  reader.join();
  CHECK(fs::is_fifo(fifo));
  CHECK(Entries(dir) == 1);
  CHECK(received == "x" + std::string(10, '\0') + big);
  fs::remove_all(dir);
}

TEST_CASE("temp file: character devices are written directly, write errors are reported", "[io]") {
  // /dev/null and /dev/full exist on every Linux system; nothing is renamed over them (a process
  // that may not rename in /dev would also fail the old way, so the kind is checked too).
  auto null_target = ResolveOutputTarget("/dev/null");
  REQUIRE(null_target.ok());
  CHECK(null_target->kind == OutputTarget::Kind::kStream);
  CHECK(WriteWhole("/dev/null", "discarded").ok());
  CHECK(fs::is_character_file("/dev/null"));
  const Status full = WriteWhole("/dev/full", "no room");
  CHECK(full.message() == "cannot write '/dev/full': No space left on device");
  auto out = ResolveOutputTarget("-");
  REQUIRE(out.ok());
  CHECK(out->kind == OutputTarget::Kind::kStdout);
}

TEST_CASE("temp file: folders are not output files", "[io]") {
  const fs::path dir = Scratch("folder");
  CHECK(CheckOutputPath(dir.string(), "").message() ==
        "cannot write '" + dir.string() + "': is a directory; -o needs a file name");
  CHECK(CheckOutputPath((dir / "new_folder/").string(), "").message() ==
        "cannot write '" + (dir / "new_folder/").string() + "': '" + (dir / "new_folder/").string() +
            "' names a folder; -o needs a file name");
  CHECK(ExternalDataFolder("-").status().message().find("external data files") != std::string::npos);
  CHECK(*ExternalDataFolder((dir / "m.onnx").string()) == dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memopt::io
