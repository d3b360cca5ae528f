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
/// the model's folder to `out_dir`, keeping relative locations; files that already are the same
/// file are skipped. The copied locations are appended to `copied`.
Status CopyExternalDataFiles(const Model& model, const std::filesystem::path& out_dir, std::vector<std::string>* copied);

}  // namespace memopt::io
