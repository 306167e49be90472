// The one escaper for text that reaches a person's terminal from elsewhere
// (the guest's events, the API server's messages, a child's stderr):
// `cosmicac-bootstrap status`, `cosmicac-vmi wait` and the child runner's log
// (common/process.hpp) pass every such string through it, so no guest, cluster
// or tool can retitle, clear or forge lines on the operator's screen.
#pragma once

#include <string>
#include <string_view>

namespace cosmicac {

// Printable UTF-8 passes through; everything a terminal could act on is
// written as a visible escape: `\` and `"` as \\ \" (so the result can sit
// between quotes), LF/CR/TAB as \n \r \t, other C0 bytes and DEL as \xNN, C1
// controls (U+0080..U+009F, e.g. the 8-bit CSI U+009B) and the bidi
// controls (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069) as \u{XXXX},
// and bytes that are not valid UTF-8 as \xNN.
std::string terminal_safe(std::string_view text);

// terminal_safe between double quotes: one token, one line.
std::string terminal_quoted(std::string_view text);

}  // namespace cosmicac
