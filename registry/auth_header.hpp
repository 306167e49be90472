// The X-Registry-Auth header dockerd takes instead of a `docker login` on disk.
#pragma once

#include "registry/credentials.hpp"

#include <string>
#include <string_view>

namespace cosmicac::registry {

// RFC 4648 §5 base64url WITH padding: what dockerd decodes (an undecodable
// header makes dockerd pull anonymously without saying so).
std::string base64url_encode(std::string_view bytes);
void base64url_append(std::string_view bytes, std::string& out);

// The same for any login (the mirror's): registry host, user, token.
std::string auth_config_json(std::string_view registry, std::string_view username, Secret const& token);
std::string registry_auth_header(std::string_view registry, std::string_view username, Secret const& token);

// The JSON dockerd expects: {"username","password","serveraddress"}. The caller wipes it.
std::string auth_config_json(Credentials const& creds);

// "X-Registry-Auth: <base64url(auth_config_json)>". The caller wipes it.
std::string registry_auth_header(Credentials const& creds);

}  // namespace cosmicac::registry
