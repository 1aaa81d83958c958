// Shipped-resource lookup.
#include "src/common/resources.h"

namespace rlfit {

std::string ResourcePath(const std::string& relative) {
  return std::string(RLFIT_SOURCE_DIR) + "/" + relative;
}

}  // namespace rlfit
