// A registry's address as the agent accepts it: host[:port], the host a
// DNS name or a dotted IPv4 address. Shared by the credential CD-ROM's
// DOCKER_REGISTRY and the configured REGISTRY_MIRROR, so both read alike.
#pragma once

#include <string_view>

namespace cosmicac {

// hostname[:port] or IPv4[:port]: no scheme, no path, no whitespace.
bool valid_registry_host(std::string_view host);

}  // namespace cosmicac
