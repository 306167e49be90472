#include "host/cluster/api_status.hpp"

#include "common/terminal_text.hpp"
#include "common/utf8.hpp"
#include "host/base/json_read.hpp"
#include "host/base/yaml_json.hpp"

#include <vector>

namespace cosmicac::host {
namespace {

constexpr std::string_view kContinuation = "\n    ";

// terminal_safe writes `"` as `\"` so that its output can sit between
// quotes; a message shown bare reads better with its quotes as they are.
// Every other escape (`\\`, `\n`, `\xNN`, `\u{…}`) stays.
std::string bare_quotes(std::string const& escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '\\' && i + 1 < escaped.size()) {
      if (escaped[i + 1] != '"') out += '\\';
      out += escaped[++i];
    } else {
      out += escaped[i];
    }
  }
  return out;
}

std::string shown_line(std::string_view line) {
  std::string raw;
  raw.reserve(line.size());
  for (char c : line) {
    if (c == '\t') raw += "  ";
    else raw += c;
  }
  while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ')) raw.pop_back();
  bool const cut = raw.size() > kMaxServerLineBytes;
  if (cut) raw.resize(utf8_cut(raw, kMaxServerLineBytes).size());
  return bare_quotes(terminal_safe(raw)) + (cut ? "…" : "");
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (true) {
    auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace

std::string server_text(std::string_view message) {
  std::vector<std::string> lines;
  for (auto line : split_lines(message)) lines.push_back(shown_line(line));
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  std::string out;
  std::size_t const end = std::min(lines.size(), first + kMaxServerMessageLines);
  for (std::size_t i = first; i < end; ++i) {
    if (i > first) out += kContinuation;
    out += lines[i];
  }
  if (end < lines.size())
    out += std::string(kContinuation) + "(" + std::to_string(lines.size() - end) +
           " more lines of the server's message not shown)";
  return out;
}

std::string status_message(HttpResponse const& resp) {
  Json status;
  try {
    status = Json::parse(resp.body);
  } catch (Json::parse_error const&) {
    return {};
  }
  if (!status.is_object()) return {};
  auto it = status.find("message");
  if (it == status.end() || !it->is_string()) return {};
  return server_text(it->get_ref<std::string const&>());
}

std::string status_text(HttpResponse const& resp) {
  auto j = parse_json(resp.body);
  std::string reason = j ? string_at(*j, {"reason"}) : "", message = j ? string_at(*j, {"message"}) : "";
  std::string out = "HTTP " + std::to_string(resp.status);
  if (!reason.empty()) out += " " + terminal_safe(reason);
  if (!message.empty()) out += ": " + server_text(message);
  return out;
}

}  // namespace cosmicac::host
