// Reads initializer data for the executor: inline raw_data straight from the model file (or the
// bytes a text/bytes model was parsed from), other inline fields by re-parsing the TensorProto
// message, and external data from its file. The model file is mapped once per reader.
#pragma once

#include "exec/tensor.h"
#include "io/model_bytes.h"
#include "io/model_loader.h"

namespace memopt {

class InitializerReader {
 public:
  explicit InitializerReader(const Model& model) : model_(model) {}

  /// The initializer's data; errors name the initializer (sparse, unsupported type, short file).
  Expected<Tensor> Read(ValueId value);

 private:
  Status EnsureSource();

  const Model& model_;
  io::ModelBytes bytes_;
  bool opened_ = false;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

/// Bytes an initializer occupies once read (numel * element size), without reading it.
int64_t InitializerBytes(const InitializerInfo& info);

}  // namespace memopt
