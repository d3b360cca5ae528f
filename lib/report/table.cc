#include "report/table.h"

#include <algorithm>

namespace memopt {

bool ParseOutputFormat(const std::string& text, OutputFormat* out) {
  if (text == "table" || text == "text") *out = OutputFormat::kTable;
  else if (text == "json") *out = OutputFormat::kJson;
  else if (text == "csv") *out = OutputFormat::kCsv;
  else if (text == "markdown" || text == "md") *out = OutputFormat::kMarkdown;
  else return false;
  return true;
}

namespace {

std::string RightTrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string CsvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string MarkdownCell(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string TextTable::ToText() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      out += cell;
      out.append(width[i] + 2 - cell.size(), ' ');
    }
    return RightTrim(out) + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string TextTable::ToCsv() const {
  auto line = [](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      out += CsvCell(row[i]);
    }
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string TextTable::ToMarkdown() const {
  auto line = [](const std::vector<std::string>& row) {
    std::string out = "|";
    for (const auto& cell : row) out += " " + MarkdownCell(cell) + " |";
    return out + "\n";
  };
  std::string out = line(header_) + "|";
  for (size_t i = 0; i < header_.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string TextTable::Render(OutputFormat format) const {
  switch (format) {
    case OutputFormat::kCsv: return ToCsv();
    case OutputFormat::kMarkdown: return ToMarkdown();
    default: return ToText();
  }
}

}  // namespace memopt
