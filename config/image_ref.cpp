// The distribution reference grammar, by hand: its only implementation is
// Go (distribution/reference); Debian packages no C/C++ equivalent.
#include "config/image_ref.hpp"

#include "config/fixed_text.hpp"

#include <fmt/format.h>

#include <optional>

namespace cosmicac::config {
namespace {

constexpr std::size_t kMaxNameLength = 255;  // distribution's NameTotalLengthMax
constexpr std::size_t kMaxTagLength = 128;

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
bool hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool has_upper(std::string_view s) {
  for (char c : s)
    if (c >= 'A' && c <= 'Z') return true;
  return false;
}

// Problems are fixed texts: a reference may carry credentials by mistake
// (user:pw@host), so none of it reaches the message.
Error bad(FixedText what) {
  return make_error(Reason::ConfigInvalid, fmt::format("invalid image reference: {}", what.view()));
}

// path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | __ | [-]+
bool valid_path_component(std::string_view c) {
  std::size_t i = 0;
  auto const n = c.size();
  auto run = [&] {
    std::size_t const b = i;
    while (i < n && lower_alnum(c[i])) ++i;
    return i > b;
  };
  if (!run()) return false;
  while (i < n) {
    if (c[i] == '.') {
      ++i;
    } else if (c[i] == '_') {
      ++i;
      if (i < n && c[i] == '_') ++i;
    } else if (c[i] == '-') {
      while (i < n && c[i] == '-') ++i;
    } else {
      return false;
    }
    if (!run()) return false;
  }
  return true;
}

// domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
bool valid_host(std::string_view h) {
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') {  // IPv6 literal
    std::string_view const ip = h.substr(1, h.size() - 2);
    int colons = 0;
    for (char c : ip) {
      if (c == ':') ++colons;
      else if (!hex_lower(c) && !(c >= 'A' && c <= 'F')) return false;
    }
    return colons >= 2;
  }
  std::size_t b = 0;
  for (;;) {
    std::size_t e = h.find('.', b);
    if (e == std::string_view::npos) e = h.size();
    std::string_view const comp = h.substr(b, e - b);
    if (comp.empty() || !alnum(comp.front()) || !alnum(comp.back())) return false;
    for (char c : comp)
      if (!alnum(c) && c != '-') return false;
    if (e == h.size()) return true;
    b = e + 1;
  }
}

bool valid_domain(std::string_view d) {
  std::string_view host = d;
  std::size_t const close = d.rfind(']');
  std::size_t const colon = d.rfind(':');
  if (colon != std::string_view::npos && (close == std::string_view::npos || colon > close)) {
    std::string_view const port = d.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    unsigned p = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      p = p * 10U + static_cast<unsigned>(c - '0');
    }
    if (p == 0 || p > 65535) return false;
    host = d.substr(0, colon);
  }
  return valid_host(host);
}

// A problem found in a part of the reference; nullopt when that part is valid.
using Problem = std::optional<Error>;

Problem check_characters(std::string_view text) {
  for (char c : text) {
    auto const u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return bad("contains whitespace, control or non-ASCII characters");
  }
  return std::nullopt;
}

// Takes "@sha256:<hex>" off the end of `name` into ref.digest.
Problem take_digest(std::string_view& name, ImageRef& ref) {
  std::size_t const at = name.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view const digest = name.substr(at + 1);
  name = name.substr(0, at);
  if (!digest.starts_with("sha256:")) return bad("digest must be sha256:<64 hex digits>");
  std::string_view const hex = digest.substr(7);
  if (hex.size() != 64) return bad("digest must be sha256:<64 hex digits>");
  for (char c : hex)
    if (!hex_lower(c)) return bad("digest must be sha256:<64 lowercase hex digits>");
  ref.digest = std::string(digest);
  return std::nullopt;
}

// Takes ":<tag>" off the end of `name` (after its last '/') into ref.tag.
Problem take_tag(std::string_view& name, ImageRef& ref) {
  std::size_t const slash = name.rfind('/');
  std::size_t const colon = name.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) return std::nullopt;
  std::string_view const tag = name.substr(colon + 1);
  name = name.substr(0, colon);
  if (tag.empty()) return bad("empty tag after ':'");
  if (tag.size() > kMaxTagLength) return bad("tag longer than 128 characters");
  auto word = [](char c) { return alnum(c) || c == '_'; };
  if (!word(tag.front())) return bad("tag must start with a letter, digit or '_'");
  for (char c : tag)
    if (!word(c) && c != '.' && c != '-') return bad("tag may contain only letters, digits, '_', '.' and '-'");
  ref.tag = std::string(tag);
  return std::nullopt;
}

// Takes a registry host off the front of `name` into ref.domain when the first
// component looks like one (has '.' or ':', is "localhost", or has capitals),
// as Docker decides; `name` is left as the repository path.
Problem take_domain(std::string_view& name, ImageRef& ref) {
  std::size_t const first = name.find('/');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view const head = name.substr(0, first);
  if (head.find_first_of(".:") == std::string_view::npos && head != "localhost" && !has_upper(head))
    return std::nullopt;
  if (!valid_domain(head)) return bad("invalid registry host or port");
  ref.domain = std::string(head);
  name = name.substr(first + 1);
  return std::nullopt;
}

Problem check_path(std::string_view path) {
  if (path.empty()) return bad("missing repository path");
  if (has_upper(path)) return bad("repository name must be lowercase");
  std::size_t b = 0;
  for (;;) {
    std::size_t e = path.find('/', b);
    if (e == std::string_view::npos) e = path.size();
    if (!valid_path_component(path.substr(b, e - b)))
      return bad("path components are lowercase letters and digits separated by '.', '_', '__' or '-'");
    if (e == path.size()) return std::nullopt;
    b = e + 1;
  }
}

}  // namespace

std::string ImageRef::repository() const { return domain + "/" + path; }

std::string ImageRef::str() const {
  std::string s = repository();
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

Result<ImageRef> parse_image_ref(std::string_view text) {
  if (text.empty()) return bad("empty");
  if (auto p = check_characters(text)) return *p;
  ImageRef ref;
  std::string_view name = text;
  if (auto p = take_digest(name, ref)) return *p;
  if (auto p = take_tag(name, ref)) return *p;
  if (name.empty()) return bad("missing repository name");
  if (auto p = take_domain(name, ref)) return *p;
  if (ref.domain.empty() || ref.domain == "index.docker.io") ref.domain = "docker.io";
  if (auto p = check_path(name)) return *p;
  ref.path = std::string(name);
  if (ref.domain == "docker.io" && ref.path.find('/') == std::string::npos) ref.path = "library/" + ref.path;
  // Measured after normalisation, so that str() always parses back.
  if (ref.repository().size() > kMaxNameLength) return bad("repository name longer than 255 characters");
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

Result<std::vector<std::string>> parse_image_allow_list(std::string_view text) {
  auto bad = [](std::string what) { return make_error(Reason::ConfigInvalid, std::move(what)); };
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= text.size()) {
    std::size_t e = text.find(',', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view const entry = text.substr(b, e - b);
    b = e + 1;
    std::string const n = std::to_string(out.size() + 1);
    if (entry.empty()) return bad("entry " + n + " is empty");
    bool const prefix = entry.back() == '/';
    // A prefix is checked as the repository one name below it would be.
    std::string const probe = std::string(entry) + (prefix ? "x" : "");
    auto ref = parse_image_ref(probe);
    if (!ref || !ref->digest.empty() || ref->repository() != probe)
      return bad("entry " + n +
                 " is not a repository written in full (host/path, no tag or digest), nor a prefix of one ending in "
                 "'/'");
    out.emplace_back(entry);
  }
  return out;
}

bool image_allowed(ImageRef const& image, std::vector<std::string> const& allowed) {
  std::string const repo = image.repository();
  for (auto const& a : allowed)
    if (a.back() == '/' ? repo.starts_with(a) : repo == a) return true;
  return false;
}

}  // namespace cosmicac::config
