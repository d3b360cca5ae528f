// Escaping for text the timeline and graph views embed in markup.
#pragma once

#include <string>
#include <string_view>

namespace memopt {

/// XML/HTML text and attribute escaping: & < > " ' become entities.
std::string XmlEscape(std::string_view text);

/// Makes JSON text safe inside an HTML <script> element: "</" becomes "<\/" (valid JSON), and
/// U+2028/U+2029 are written as \u escapes.
std::string JsonForScript(std::string_view json);

}  // namespace memopt
