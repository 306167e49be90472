#include "registry/auth_header.hpp"

namespace cosmicac::registry {

// Hand-written: ~15 lines; the only packaged encoders live in OpenSSL/GnuTLS,
// too heavy for the static agent just for this.
void base64url_append(std::string_view bytes, std::string& out) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned const v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (std::size_t const rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
}

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  base64url_append(bytes, out);
  return out;
}

namespace {
// JSON string escaping by hand rather than nlohmann's dump(): the output buffer
// is reserved once at its worst-case size, so no reallocation leaves a freed,
// unwiped copy of the token on the heap.
void append_json_string(std::string_view v, std::string& out) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (char ch : v) {
    auto const c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;  // UTF-8 passes through
    }
  }
  out += '"';
}
}  // namespace

std::string auth_config_json(std::string_view registry, std::string_view username, Secret const& token) {
  std::string out;
  out.reserve(64 + 6 * (username.size() + token.size() + registry.size()));
  out += "{\"username\":";
  append_json_string(username, out);
  out += ",\"password\":";
  append_json_string(token.reveal(), out);
  out += ",\"serveraddress\":";
  append_json_string(registry, out);
  out += '}';
  return out;
}

std::string auth_config_json(Credentials const& creds) {
  return auth_config_json(creds.registry, creds.username, creds.token);
}

std::string registry_auth_header(std::string_view registry, std::string_view username, Secret const& token) {
  std::string json = auth_config_json(registry, username, token);
  std::string header = "X-Registry-Auth: ";
  header.reserve(header.size() + (json.size() + 2) / 3 * 4);
  base64url_append(json, header);  // straight into the header: no intermediate copy
  wipe(json);
  return header;
}

std::string registry_auth_header(Credentials const& creds) {
  return registry_auth_header(creds.registry, creds.username, creds.token);
}

}  // namespace cosmicac::registry
