#include "io/torch_module_names.h"

#include <cctype>
#include <vector>

namespace memopt::io {
namespace {

/// The quoted strings of a Python list repr: "['', 'a.b', \"c\"]" -> {"", "a.b", "c"}.
std::vector<std::string> PythonStrings(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char quote = text[i];
    if (quote != '\'' && quote != '"') continue;
    std::string item;
    size_t j = i + 1;
    for (; j < text.size() && text[j] != quote; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) ++j;
      item.push_back(text[j]);
    }
    out.push_back(std::move(item));
    i = j;
  }
  return out;
}

}  // namespace

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

std::string ModuleFromMetadata(const MetadataEntries& metadata) {
  std::string from_namespace;
  // Newer exporters end name_scopes with the fx node's own name ("%matmul_3 : ..."): not a module.
  std::string fx_name;
  for (const auto& [key, value] : metadata) {
    if (key == "pkg.torch.onnx.fx_node" && value.rfind('%', 0) == 0) fx_name = value.substr(1, value.find(' ') - 1);
  }
  for (const auto& [key, value] : metadata) {
    if (key == "pkg.torch.onnx.name_scopes") {
      const std::vector<std::string> scopes = PythonStrings(value);
      for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
        if (!it->empty() && *it != fx_name) return *it;
      }
    } else if (key == "namespace") {
      // "name: Class/name: Class/...": the innermost named level.
      size_t start = 0;
      while (start <= value.size()) {
        const size_t slash = std::min(value.find('/', start), value.size());
        const std::string level = value.substr(start, slash - start);
        const std::string name = Trim(level.substr(0, level.find(':')));
        if (!name.empty()) from_namespace = name;
        start = slash + 1;
      }
    }
  }
  return from_namespace;
}

std::string ModuleFromFunctionName(const std::string& function_name) {
  // "<python module path>_<Class>_<attribute path>_<n>", the attribute path sometimes after
  // dynamo's "L__<self name>___" prefix: the class is the first '_'-separated word that starts
  // with a capital letter and is followed by a path.
  size_t cls_begin = std::string::npos;
  for (size_t i = 0; i < function_name.size(); ++i) {
    const bool word_start = i == 0 || function_name[i - 1] == '_';
    const bool self_marker = function_name.compare(i, 3, "L__") == 0;
    if (word_start && self_marker) break;  // the attribute path started without a class
    if (word_start && std::isupper(static_cast<unsigned char>(function_name[i]))) {
      cls_begin = i;
      break;
    }
  }
  if (cls_begin == std::string::npos) return "";
  const size_t cls_end = std::min(function_name.find('_', cls_begin), function_name.size());
  const std::string cls = function_name.substr(cls_begin, cls_end - cls_begin);
  std::string attribute = cls_end < function_name.size() ? function_name.substr(cls_end + 1) : std::string();
  if (attribute.rfind("L__", 0) == 0) {
    const size_t self_end = attribute.find("___");
    attribute = self_end == std::string::npos ? std::string() : attribute.substr(self_end + 3);
  }
  // The trailing call counter "_<n>".
  const size_t last = attribute.find_last_of('_');
  if (last != std::string::npos && last + 1 < attribute.size() &&
      attribute.find_first_not_of("0123456789", last + 1) == std::string::npos) {
    attribute.resize(last);
  }
  if (attribute.empty()) return cls;
  return attribute + " (" + cls + ")";
}

}  // namespace memopt::io
