// Turns an initializer's wire metadata into InitializerInfo, checking it against the rest of the
// file and the file system: known data type, dims whose byte size fits int64, inline raw_data of
// the size the dims need, external data files that exist inside the model's folder and cover the
// bytes the tensor needs. Decodes small integer tensors. Internal to the loader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/tensor_meta.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt::io {

struct CheckedInitializer {
  InitializerInfo info;
  std::optional<std::vector<int64_t>> values;  ///< small integer tensors only
};

class InitializerChecker {
 public:
  /// `base_dir`: folder external-data locations are relative to; `check_files`: whether to look
  /// at the external files (existence and size).
  InitializerChecker(std::string base_dir, bool check_files)
      : base_dir_(std::move(base_dir)), check_files_(check_files) {}

  /// `field` is the (Sparse)TensorProto field `meta` was read from; its payload must still be
  /// readable (small integer tensors are decoded from it).
  Expected<CheckedInitializer> Check(const TensorMeta& meta, const wire::Field& field);

 private:
  Status CheckExternal(const TensorMeta& meta, std::optional<uint64_t> bytes, InitializerInfo& info);
  /// Size of an external file (cached per location); nullopt when it does not exist.
  Expected<std::optional<uint64_t>> ExternalFileSize(const std::string& location);

  std::string base_dir_;
  bool check_files_;
  std::map<std::string, std::optional<uint64_t>> file_sizes_;
};

}  // namespace memopt::io
