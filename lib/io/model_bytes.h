// The serialized bytes of a loaded model, for the code that reads pieces of it again (the
// writers splice its fields, the executor reads inline initializers): the model file, mapped, or
// the bytes a text/bytes model was parsed from.
#pragma once

#include <cstdint>
#include <string>

#include "io/mapped_file.h"
#include "io/model_loader.h"
#include "util/status.h"

namespace memopt::io {

class ModelBytes {
 public:
  /// Maps `model.path`, or uses `model.source_bytes`. With neither, an error ending in `; <need>`
  /// (what the caller cannot do without them, e.g. "cannot write it"). A file that changed since
  /// the model was loaded is an error ("changed while reading").
  Status Open(const Model& model, const std::string& need);

  const uint8_t* data() const { return data_; }
  /// Ok while the mapped file is as it was when the model was loaded (MappedFile::Intact); call
  /// it after reading, before trusting or committing what was read.
  Status Intact() const { return mapped_ ? file_.Intact() : Status::Ok(); }
  uint64_t size() const { return size_; }

 private:
  MappedFile file_;
  bool mapped_ = false;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace memopt::io
