// The system's CA bundle, for a server whose kubeconfig names no CA (an API
// server with a publicly trusted certificate).
#pragma once

#include <string>

namespace cosmicac::host {

// $SSL_CERT_FILE when set (OpenSSL's and Go's variable), else the first
// bundle file that exists among the places the Linux distributions keep it
// (Go's crypto/x509 list: Debian and Ubuntu, Fedora and RHEL, openSUSE,
// OpenELEC, CentOS, Alpine), else empty (libcurl's own default). libcurl's
// default is one path fixed when it was built: the static release binary
// meets other distributions' layouts.
std::string system_ca_bundle();

}  // namespace cosmicac::host
