#pragma once
// List continue tokens, in upstream's shape (storage.EncodeContinue): base64 of
// {"v":"meta.k8s.io/v1","rv":N,"start":"<namespace>/<name>\u0000"}, where rv is the list's
// snapshot and start the key after which the next page begins. Opaque to clients.

#include <cstdint>
#include <string>
#include <string_view>

#include "store/store.h"

namespace kubesched::store {

struct ContinueToken {
  uint64_t resource_version = 0;
  std::string namespace_;  //!< empty for cluster-scoped resources
  std::string name;        //!< the last item of the previous page
};

std::string EncodeContinueToken(const ContinueToken& token);
//! 400 BadRequest for anything EncodeContinueToken did not make.
Result<ContinueToken> DecodeContinueToken(std::string_view text);

}  // namespace kubesched::store
