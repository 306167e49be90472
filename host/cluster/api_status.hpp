// The message of a Kubernetes API server's Status answer, as a person reads
// it: decoded from JSON, every line through the one terminal escaper, and a
// multi-line message (a field diff the server prints after "is immutable")
// as indented continuation lines, bounded.
#pragma once

#include "host/cluster/kube_client.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cosmicac::host {

// The most of a server's message shown: lines, and bytes of each line.
inline constexpr std::size_t kMaxServerMessageLines = 30;
inline constexpr std::size_t kMaxServerLineBytes = 400;

// A server's text for the terminal: its first line as is, each further line
// on its own line indented by four spaces (so none can pass for a line of
// cosmicac-vmi's own), tabs as two spaces; every line escaped by
// terminal_safe, except that a double quote is shown as itself
// (the text is not between quotes). Beyond the bounds a line ends in "…",
// and a last indented line says how many lines were left out.
std::string server_text(std::string_view message);

// The `message` of the Status object in the body of a failed call, through
// server_text; empty when the body is no JSON object with a string message.
std::string status_message(HttpResponse const& resp);

// A failed call as "HTTP 403 Forbidden: <the Status body's message>", escaped
// (the reason by terminal_safe, the message by server_text).
std::string status_text(HttpResponse const& resp);

}  // namespace cosmicac::host
