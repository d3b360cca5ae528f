// Copies the external data files a model refers to into another folder, so that a model written
// there (apply, grad) still finds its weights.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "io/model_loader.h"
#include "util/status.h"

namespace memopt::io {

/// Copies every external data file of `model`'s initializers (by location, once each, sorted) from
/// the model's folder to the folder of `output_path` (ExternalDataFolder: an error for stream
/// outputs such as "-" when there is something to copy), keeping relative locations; files that
/// already are the same file are skipped. The copied locations are appended to `copied`.
Status CopyExternalDataFiles(const Model& model, const std::string& output_path, std::vector<std::string>* copied);

}  // namespace memopt::io
