#include "io/model_bytes.h"

namespace memopt::io {

Status ModelBytes::Open(const Model& model, const std::string& need) {
  if (!model.path.empty()) {
    MEMOPT_RETURN_IF_ERROR(file_.Open(model.path).WithContext(model.path));
    mapped_ = true;
    if (!(file_.stamp() == model.file_stamp)) return FileChangedError(model.path);
    data_ = file_.data();
    size_ = file_.size();
  } else if (model.source_bytes != nullptr) {
    data_ = reinterpret_cast<const uint8_t*>(model.source_bytes->data());
    size_ = model.source_bytes->size();
  } else {
    return InvalidInput("the model has neither a file nor its serialized bytes; " + need);
  }
  return Status::Ok();
}

}  // namespace memopt::io
