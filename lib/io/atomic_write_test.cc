#include "io/atomic_write.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace memopt {

namespace fs = std::filesystem;

TEST_CASE("WriteFileAtomically writes whole files and refuses bad targets", "[io]") {
  fs::path dir = fs::temp_directory_path() / "memopt_atomic_write_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string out = (dir / "a.txt").string();
  REQUIRE(WriteFileAtomically(out, "hello").ok());
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "hello");

  Status missing = WriteFileAtomically((dir / "nope" / "b.txt").string(), "x");
  CHECK(missing.code() == ErrorCode::kInvalidInput);
  CHECK(missing.message().find("does not exist") != std::string::npos);

  Status same = WriteFileAtomically(out, "x", out);
  CHECK(same.code() == ErrorCode::kUsage);

  // No temporary files are left behind.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) { (void)e; ++files; }
  CHECK(files == 1);
  fs::remove_all(dir);
}

}  // namespace memopt
