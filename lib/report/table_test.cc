#include "report/table.h"

#include <catch2/catch.hpp>

namespace memopt {

TEST_CASE("TextTable renders aligned text, csv and markdown", "[report]") {
  TextTable t({"Configs", "Freq", "Max Saving(Bytes)"});
  t.AddRow({"Gelu+:1:-1", "1", "2,000"});
  t.AddRow({"Expand+Tile+:1:-1", "12", "a|b"});
  CHECK(t.ToText() ==
        "Configs            Freq  Max Saving(Bytes)\n"
        "Gelu+:1:-1         1     2,000\n"
        "Expand+Tile+:1:-1  12    a|b\n");
  CHECK(t.ToCsv() == "Configs,Freq,Max Saving(Bytes)\nGelu+:1:-1,1,\"2,000\"\nExpand+Tile+:1:-1,12,a|b\n");
  CHECK(t.ToMarkdown() ==
        "| Configs | Freq | Max Saving(Bytes) |\n| --- | --- | --- |\n| Gelu+:1:-1 | 1 | 2,000 |\n"
        "| Expand+Tile+:1:-1 | 12 | a\\|b |\n");
}

TEST_CASE("ParseOutputFormat accepts the documented names", "[report]") {
  OutputFormat f;
  CHECK(ParseOutputFormat("markdown", &f));
  CHECK(f == OutputFormat::kMarkdown);
  CHECK(ParseOutputFormat("json", &f));
  CHECK(f == OutputFormat::kJson);
  CHECK_FALSE(ParseOutputFormat("yaml", &f));
}

}  // namespace memopt
