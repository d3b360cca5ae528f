#include "io/initializer_check.h"

#include <filesystem>
#include <limits>
#include <system_error>

#include "io/model_loader.h"

namespace memopt::io {

namespace {

namespace fs = std::filesystem;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::optional<uint64_t> ParseUnsigned(const std::string& text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

bool DecodedAtLoad(DataType t) { return IsInteger(t) || t == DataType::kBool; }

}  // namespace

Expected<CheckedInitializer> InitializerChecker::Check(const TensorMeta& meta, const wire::Field& field) {
  const std::string what = "initializer " + Quote(meta.name);
  if (!IsKnownDataType(meta.data_type)) {
    return InvalidInput(what + " has unknown data type " + std::to_string(meta.data_type));
  }
  const auto dtype = static_cast<DataType>(meta.data_type);
  MEMOPT_ASSIGN_OR_RETURN(int64_t numel, CheckedNumElements(meta.dims, what));
  const std::optional<uint64_t> bytes = DataBytes(dtype, numel);
  if (!bytes.has_value() && dtype != DataType::kString) {
    return InvalidInput(what + " has dims " + DimsText(meta.dims) + " of " + DataTypeName(dtype) +
                        " whose byte size overflows int64");
  }

  CheckedInitializer out;
  InitializerInfo& info = out.info;
  info.dims = meta.dims;
  info.dtype = dtype;
  info.file_offset = meta.message_offset;
  info.file_length = meta.message_size;
  info.is_sparse = meta.is_sparse;
  if (meta.is_sparse) return out;  // metadata only: the values are not the dense data

  if (meta.external) {
    info.storage = InitializerInfo::Storage::kExternal;
    MEMOPT_RETURN_IF_ERROR(CheckExternal(meta, bytes, info));
    return out;
  }

  if (meta.has_raw_data) {
    info.raw_data_offset = meta.raw_offset;
    info.raw_data_length = meta.raw_size;
    if (dtype == DataType::kString) {
      return InvalidInput(what + " is a string tensor with raw_data (strings must use string_data)");
    }
    if (meta.raw_size != *bytes) {
      return InvalidInput(what + " has " + std::to_string(meta.raw_size) + " bytes of raw_data, but its dims " +
                          DimsText(meta.dims) + " of " + DataTypeName(dtype) + " need " +
                          std::to_string(*bytes) + " bytes");
    }
  } else if (!meta.has_typed_data && numel > 0) {
    return InvalidInput(what + " has dims " + DimsText(meta.dims) + " but no data");
  }

  if (DecodedAtLoad(dtype) && numel <= kMaxFoldedElements) {
    MEMOPT_ASSIGN_OR_RETURN(out.values, DecodeSmallIntTensor(field, meta, numel));
  }
  return out;
}

Status InitializerChecker::CheckExternal(const TensorMeta& meta, std::optional<uint64_t> bytes,
                                         InitializerInfo& info) {
  const std::string what = "initializer " + Quote(meta.name);
  bool has_location = false;
  for (const auto& [key, value] : meta.external_entries) {
    if (key == "location") {
      has_location = true;
      info.external_location = value;
    } else if (key == "offset" || key == "length") {
      const auto parsed = ParseUnsigned(value);
      if (!parsed) return InvalidInput(what + " has an invalid external data " + key + " " + Quote(value));
      if (key == "offset") {
        info.external_offset = *parsed;
      } else {
        info.external_length = *parsed;
      }
    }
  }
  if (!has_location || info.external_location.empty()) {
    return InvalidInput(what + " is stored as external data but has no 'location'");
  }
  const fs::path location(info.external_location);
  if (location.is_absolute() || location.has_root_name() || location.has_root_directory()) {
    return InvalidInput(what + " has an absolute external data location " + Quote(info.external_location) +
                        "; locations must be relative to the model's folder");
  }
  const fs::path normal = location.lexically_normal();
  if (normal.empty() || *normal.begin() == ".." || normal == ".") {
    return InvalidInput(what + " has external data location " + Quote(info.external_location) +
                        " outside the model's folder");
  }
  if (info.external_length && bytes && *info.external_length != *bytes) {
    return InvalidInput(what + " has external data length " + std::to_string(*info.external_length) +
                        ", but its dims " + DimsText(meta.dims) + " of " +
                        DataTypeName(static_cast<DataType>(meta.data_type)) + " need " + std::to_string(*bytes) +
                        " bytes");
  }
  if (!check_files_) return Status::Ok();

  MEMOPT_ASSIGN_OR_RETURN(std::optional<uint64_t> file_size, ExternalFileSize(info.external_location));
  if (!file_size) {
    return InvalidInput(what + " refers to external data file " + Quote(info.external_location) +
                        " which does not exist (looked in " + base_dir_ + ")");
  }
  const std::optional<uint64_t> needed = info.external_length ? info.external_length : bytes;
  const uint64_t begin = info.external_offset;
  const uint64_t length = needed.value_or(0);
  const bool overflow = length > std::numeric_limits<uint64_t>::max() - begin;
  if (overflow || begin + length > *file_size) {
    return InvalidInput(what + " refers to external data file " + Quote(info.external_location) + " which is " +
                        std::to_string(*file_size) + " bytes, but the tensor needs bytes " +
                        std::to_string(begin) + ".." +
                        (overflow ? std::string("(overflow)") : std::to_string(begin + length)));
  }
  return Status::Ok();
}

Expected<std::optional<uint64_t>> InitializerChecker::ExternalFileSize(const std::string& location) {
  auto cached = file_sizes_.find(location);
  if (cached != file_sizes_.end()) return cached->second;
  const fs::path full = fs::path(base_dir_) / fs::path(location);
  std::error_code ec;
  const fs::file_status st = fs::status(full, ec);
  std::optional<uint64_t> size;
  if (!ec && fs::exists(st)) {
    if (!fs::is_regular_file(st)) {
      return InvalidInput("external data file " + Quote(location) + " is not a regular file");
    }
    const auto n = fs::file_size(full, ec);
    if (ec) return InvalidInput("cannot read the size of external data file " + Quote(location) + ": " + ec.message());
    size = static_cast<uint64_t>(n);
  }
  file_sizes_[location] = size;
  return size;
}

}  // namespace memopt::io
