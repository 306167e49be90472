#include "gpu/xid.hpp"

#include "gpu/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace cosmicac::gpu {
namespace {

constexpr std::size_t kMaxLine = 8192;
constexpr std::size_t kMaxEvents = 256;
constexpr std::size_t kMaxRecords = 1U << 20;  // a log buffer holds far fewer; a bound on a device that never ends
constexpr std::string_view kMarker = "NVRM: Xid (";

std::optional<unsigned> code_of(std::string_view& s) {
  std::size_t n = 0;
  unsigned v = 0;
  while (n < s.size() && n < 5 && s[n] >= '0' && s[n] <= '9') v = v * 10 + static_cast<unsigned>(s[n++] - '0');
  if (n == 0 || n == 5) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

}  // namespace

std::optional<XidEvent> parse_xid_line(std::string_view line) {
  if (line.size() > kMaxLine) return std::nullopt;
  auto const at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = line.substr(at + kMarker.size());
  if (rest.starts_with("PCI:")) rest.remove_prefix(4);
  auto const close = rest.find("): ");
  if (close == std::string_view::npos) return std::nullopt;
  auto const addr = parse_pci_address(rest.substr(0, close));
  if (!addr) return std::nullopt;
  rest.remove_prefix(close + 3);
  auto const code = code_of(rest);
  if (!code) return std::nullopt;
  if (rest.starts_with(",")) rest.remove_prefix(1);
  if (rest.ends_with('\n')) rest.remove_suffix(1);
  return XidEvent{.gpu = *addr, .code = *code, .detail = text::plain(text::trim(rest), 160)};
}

bool xid_needs_reset(unsigned code) noexcept {
  switch (code) {
    case 48:
    case 63:
    case 64:
    case 74:
    case 79:
    case 94:
    case 95: return true;
    default: return false;
  }
}

std::optional<XidEvent> parse_kmsg_record(std::string_view record) {
  if (record.starts_with(' ')) return std::nullopt;  // a continuation line (key=value)
  auto const semi = record.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  auto const text = record.substr(semi + 1);
  return parse_xid_line(text.substr(0, text.find('\n')));
}

std::vector<XidEvent> xids_of_kmsg_text(std::string_view text) {
  std::vector<XidEvent> events;
  while (!text.empty() && events.size() < kMaxEvents) {
    auto const nl = text.find('\n');
    if (auto e = parse_kmsg_record(text.substr(0, nl))) events.push_back(std::move(*e));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return events;
}

namespace {

// /dev/kmsg: one record per read(), EAGAIN at the end (opened non-blocking).
std::vector<XidEvent> read_records(int fd) {
  std::vector<XidEvent> events;
  std::vector<char> buf(kMaxLine + 1);
  for (std::size_t records = 0; records < kMaxRecords && events.size() < kMaxEvents; ++records) {
    ssize_t const n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EPIPE || errno == EINTR)) continue;  // EPIPE: records overwritten meanwhile
    if (n <= 0) break;
    if (auto e = parse_kmsg_record(std::string_view(buf.data(), static_cast<std::size_t>(n))))
      events.push_back(std::move(*e));
  }
  return events;
}

// A recorded log (tests, a saved copy): records one per line, at most 16 MiB read.
std::vector<XidEvent> read_recorded(int fd) {
  std::string text;
  std::vector<char> buf(1U << 16);
  while (text.size() < (16U << 20)) {
    ssize_t const n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf.data(), static_cast<std::size_t>(n));
  }
  return xids_of_kmsg_text(text);
}

}  // namespace

std::vector<XidEvent> read_kmsg_xids(std::string const& kmsg_path) {
  int const fd = ::open(kmsg_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  bool const regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  auto events = regular ? read_recorded(fd) : read_records(fd);
  ::close(fd);
  return events;
}

}  // namespace cosmicac::gpu
