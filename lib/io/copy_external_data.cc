#include "io/copy_external_data.h"

#include <set>
#include <system_error>

namespace memopt::io {

namespace fs = std::filesystem;

Status CopyExternalDataFiles(const Model& model, const fs::path& out_dir, std::vector<std::string>* copied) {
  std::set<std::string> locations;
  for (const Value& v : model.graph.values) {
    if (v.initializer && v.initializer->storage == InitializerInfo::Storage::kExternal) {
      locations.insert(v.initializer->external_location);
    }
  }
  for (const std::string& location : locations) {
    const fs::path from = fs::path(model.base_dir) / location;
    const fs::path to = out_dir / location;
    std::error_code ec;
    if (fs::exists(to, ec) && fs::equivalent(from, to, ec)) continue;
    if (to.has_parent_path()) fs::create_directories(to.parent_path(), ec);
    if (!fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec)) {
      return InvalidInput("cannot copy external data '" + from.string() + "' to '" + to.string() + "': " + ec.message());
    }
    copied->push_back(location);
  }
  return Status::Ok();
}

}  // namespace memopt::io
