#include "config/scalars.hpp"

#include "config/fixed_text.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace cosmicac::config {
namespace {

constexpr std::size_t kMaxContainerName = 128;

constexpr FixedText kMountPointRule =
    "must be /data, /models or /scratch, or one name below them or below /mnt or /srv "
    "(letters, digits, '.', '_', '-'; at most 64 characters)";

// Problems are fixed texts: a value never reaches its own error message.
Error bad(FixedText what) { return make_error(Reason::ConfigInvalid, std::string(what.view())); }

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (lower(a[k]) != lower(b[k])) return false;
  return true;
}

// Leading decimal digits as an unsigned number; false on none or overflow.
bool leading_number(std::string_view text, std::uint64_t& value, std::size_t& used) {
  value = 0;
  used = 0;
  while (used < text.size() && text[used] >= '0' && text[used] <= '9') {
    auto const d = static_cast<std::uint64_t>(text[used] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
    ++used;
  }
  return used > 0;
}

}  // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t n = 0;
  std::size_t used = 0;
  if (!leading_number(text, n, used)) return bad("expected a size such as 100G, 100GiB, 1T or a byte count");
  std::string_view unit = text.substr(used);
  if (iequals(unit, "b")) unit = {};
  unsigned shift = 0;
  if (!unit.empty()) {
    constexpr std::string_view kUnits = "kmgtpe";
    std::size_t const idx = kUnits.find(lower(unit.front()));
    std::string_view const rest = unit.substr(1);
    if (idx == std::string_view::npos || !(rest.empty() || iequals(rest, "b") || iequals(rest, "ib")))
      return bad("unknown size unit (use K, M, G, T, P or E, optionally followed by B or iB)");
    shift = 10U * static_cast<unsigned>(idx + 1);
  }
  if (shift > 0 && n > (std::numeric_limits<std::uint64_t>::max() >> shift)) return bad("size too large");
  return n << shift;
}

Result<std::chrono::seconds> parse_duration(std::string_view text) {
  std::uint64_t n = 0;
  std::size_t used = 0;
  if (!leading_number(text, n, used)) return bad("expected a duration such as 60, 60s, 5m or 1h");
  std::string_view const unit = text.substr(used);
  std::uint64_t mult = 0;
  if (unit.empty() || unit == "s") mult = 1;
  else if (unit == "m") mult = 60;
  else if (unit == "h") mult = 3600;
  else return bad("unknown duration unit (use s, m or h)");
  constexpr std::uint64_t kMax = 366ULL * 24 * 3600;  // a year: anything longer is a typo
  if (n > kMax / mult) return bad("duration longer than a year");
  return std::chrono::seconds(static_cast<std::chrono::seconds::rep>(n * mult));
}

Result<bool> parse_bool(std::string_view text) {
  for (auto t : {"yes", "true", "1"})
    if (iequals(text, t)) return true;
  for (auto f : {"no", "false", "0"})
    if (iequals(text, f)) return false;
  return bad("expected yes/no, true/false or 1/0");
}

namespace {

// The places a data disk may go. An allow-list, not a list of system
// directories: the container gets MNT read-write, so any value inside a tree
// the system runs or trusts (/usr/local/bin, /etc/cron.d, /root/.ssh,
// /var/lib/docker, …) would make it root. These are outside every such tree.
constexpr std::array<std::string_view, 3> kDataTops{"data", "models", "scratch"};  // alone or with one name below
constexpr std::array<std::string_view, 2> kNamedTops{"mnt", "srv"};                // only with one name below
constexpr std::size_t kMaxMountName = 64;

// Names below /mnt and /srv that something else on the guest mounts: the
// reference script's credential mount and the legacy delivery's ISO mount,
// and every cosmicac* name, kept for the agent's own use.
bool reserved_mount_name(std::string_view name) noexcept {
  constexpr std::string_view kOurs = "cosmicac";
  return iequals(name, "registrycred") || iequals(name, "bootstrap") ||
         (name.size() >= kOurs.size() && iequals(name.substr(0, kOurs.size()), kOurs));
}

}  // namespace

Result<std::string> normalise_mount_point(std::string_view text) {
  if (text.empty() || text.front() != '/') return bad("must be an absolute path");
  for (char c : text) {
    auto const u = static_cast<unsigned char>(c);
    // fstab separates fields with whitespace; control characters are never intended.
    if (u <= 0x20 || u == 0x7F) return bad("must not contain whitespace or control characters");
  }
  std::vector<std::string_view> comps;
  std::size_t b = 0;
  while (b < text.size()) {
    std::size_t e = text.find('/', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view const comp = text.substr(b, e - b);
    if (comp == "..") return bad("must not contain '..'");
    if (!comp.empty() && comp != ".") comps.push_back(comp);
    b = e + 1;
  }
  if (comps.empty()) return bad("must not be /");
  auto const in = [](auto const& tops, std::string_view top) {
    return std::find(tops.begin(), tops.end(), top) != tops.end();
  };
  bool const data_top = in(kDataTops, comps.front());
  bool const named_top = in(kNamedTops, comps.front());
  if (!data_top && !named_top) return bad(kMountPointRule);
  if (comps.size() > 2 || (named_top && comps.size() != 2)) return bad(kMountPointRule);
  if (comps.size() == 2) {
    // One name, in a conservative charset (never "." or ".."): a container name's.
    if (comps[1].size() > kMaxMountName || !valid_container_name(comps[1])) return bad(kMountPointRule);
    if (named_top && reserved_mount_name(comps[1])) return bad("names a directory the guest mounts for itself");
  }
  std::string out;
  for (auto c : comps) {
    out += '/';
    out += c;
  }
  return out;
}

bool valid_container_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxContainerName) return false;
  for (std::size_t k = 0; k < name.size(); ++k) {
    char const c = name[k];
    bool const an = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!an && (k == 0 || (c != '_' && c != '.' && c != '-'))) return false;
  }
  return true;
}

}  // namespace cosmicac::config
