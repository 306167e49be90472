// SHA-256 (FIPS 180-4), hex-encoded. Hand-written (~60 lines) because the only
// packaged implementations are in OpenSSL/GnuTLS/libgcrypt, which would not fit
// the 1 MiB static agent just to hash a container spec.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac::container {

std::string sha256_hex(std::string_view data);

}  // namespace cosmicac::container
