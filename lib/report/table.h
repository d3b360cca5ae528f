// A plain text table rendered as aligned text (ORT's PTable layout: each cell left-justified to
// the column width + 2), CSV or Markdown. Deterministic: rows print in insertion order.
#pragma once

#include <string>
#include <vector>

namespace memopt {

enum class OutputFormat { kTable, kJson, kCsv, kMarkdown };

/// "table" | "json" | "csv" | "markdown" (also "md"); false when unknown.
bool ParseOutputFormat(const std::string& text, OutputFormat* out);

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }

  /// Aligned columns, two spaces apart; trailing spaces trimmed; one line per row.
  std::string ToText() const;
  /// RFC 4180 CSV (quotes where needed), header first.
  std::string ToCsv() const;
  /// GitHub Markdown table; '|' in cells escaped.
  std::string ToMarkdown() const;
  std::string Render(OutputFormat format) const;  ///< kJson is not handled here (returns text)

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace memopt
