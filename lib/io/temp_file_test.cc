#include "io/temp_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

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

}  // namespace
}  // namespace memopt::io
