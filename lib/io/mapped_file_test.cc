#include "io/mapped_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

namespace memopt::io {
namespace {

namespace fs = std::filesystem;

TEST_CASE("mapped file: a file truncated under the mapping reads zeros and is reported, no SIGBUS", "[io]") {
  const fs::path path = fs::temp_directory_path() / ("memopt_mapped_" + std::to_string(::getpid()) + ".bin");
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::ofstream(path, std::ios::binary) << std::string(4 * page, 'w');
  MappedFile file;
  REQUIRE(file.Open(path.string()).ok());
  REQUIRE(file.size() == 4 * page);
  CHECK(file.data()[3 * page + 7] == 'w');
  CHECK(file.Intact().ok());
  fs::resize_file(path, page);  // what `cp new.onnx model.onnx` does first
  // Without the guard this read ends the process with SIGBUS.
  const volatile uint8_t past_end = file.data()[2 * page + 100];
  CHECK(past_end == 0);
  CHECK(file.data()[10] == 'w');  // pages still in the file are untouched
  const Status changed = file.Intact();
  CHECK(changed.message() == "the file '" + path.string() +
                                 "' changed while memopt read it (truncated, rewritten or replaced); run again once "
                                 "it is complete");
  fs::remove(path);
}

TEST_CASE("mapped file: a file replaced or rewritten after mapping is reported", "[io]") {
  const fs::path path = fs::temp_directory_path() / ("memopt_mapped_r_" + std::to_string(::getpid()) + ".bin");
  std::ofstream(path, std::ios::binary) << "first version";
  MappedFile file;
  REQUIRE(file.Open(path.string()).ok());
  CHECK(file.Intact().ok());
  const fs::path other = path.string() + ".new";
  std::ofstream(other, std::ios::binary) << "second, longer version";
  fs::rename(other, path);  // an atomic replace: the mapping keeps the old bytes, the stamp changes
  CHECK_FALSE(file.Intact().ok());
  fs::remove(path);
}

}  // namespace
}  // namespace memopt::io
