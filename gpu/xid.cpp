#include "gpu/xid.hpp"

#include "gpu/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace cosmicac::gpu {
namespace {

constexpr std::size_t kMaxLine = 8192;
constexpr std::size_t kMaxRecords = 1U << 20;  // a log buffer holds far fewer; a bound on a device that never ends
constexpr std::size_t kMaxBytes = 32U << 20;   // the largest buffer CONFIG_LOG_BUF_SHIFT allows
constexpr std::string_view kMarker = "NVRM: Xid (";

// Up to `max_digits` decimal digits at the front of `s`, taken off it.
std::optional<std::uint64_t> number_of(std::string_view& s, std::size_t max_digits) {
  std::size_t n = 0;
  std::uint64_t v = 0;
  while (n < s.size() && n <= max_digits && s[n] >= '0' && s[n] <= '9')
    v = v * 10 + static_cast<unsigned>(s[n++] - '0');
  if (n == 0 || n > max_digits) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

}  // namespace

std::optional<KmsgRecord> split_kmsg_record(std::string_view record) {
  auto const semi = record.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  auto head = record.substr(0, semi);
  auto const prio = number_of(head, 10);
  if (!prio || *prio > 0xFFFFFFFFU || !head.starts_with(',')) return std::nullopt;
  head.remove_prefix(1);
  auto const seq = number_of(head, 19);
  if (!seq || !head.starts_with(',')) return std::nullopt;
  auto const text = record.substr(semi + 1);
  return KmsgRecord{.facility = static_cast<unsigned>(*prio >> 3U),
                    .level = static_cast<unsigned>(*prio & 7U),
                    .seq = *seq,
                    .text = text.substr(0, text.find('\n'))};
}

std::optional<XidEvent> parse_xid_text(std::string_view text) {
  if (text.size() > kMaxLine || !text.starts_with(kMarker)) return std::nullopt;
  auto rest = text.substr(kMarker.size());
  if (rest.starts_with("PCI:")) rest.remove_prefix(4);
  auto const close = rest.find("): ");
  if (close == std::string_view::npos) return std::nullopt;
  auto const addr = parse_pci_address(rest.substr(0, close));
  if (!addr) return std::nullopt;
  rest.remove_prefix(close + 3);
  auto const code = number_of(rest, 4);
  if (!code) return std::nullopt;
  if (rest.starts_with(",")) rest.remove_prefix(1);
  return XidEvent{.gpu = *addr, .code = static_cast<unsigned>(*code), .detail = text::plain(text::trim(rest), 160)};
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
  auto const r = split_kmsg_record(record);
  if (!r || r->facility != 0) return std::nullopt;  // only the kernel's own records
  auto x = parse_xid_text(r->text);
  if (x) x->seq = r->seq;
  return x;
}

namespace {

// One record read into the log: its place in the sequence and its Xid, if any.
void take(KernelLog& log, std::string_view record) {
  auto const r = split_kmsg_record(record);
  if (!r) return;
  if (log.records == 0) {
    log.first_seq = r->seq;
    if (r->seq != 0) log.missing_below = r->seq;
  } else if (r->seq > log.next_seq) {
    log.missing_below = r->seq;
  }
  ++log.records;
  log.next_seq = std::max(log.next_seq, r->seq + 1);
  auto x = parse_kmsg_record(record);
  if (!x) return;
  if (xid_needs_reset(x->code)) {
    if (++log.reset_count <= kMaxResetXidsKept) log.xids.push_back(*x);
    log.newest_reset = std::move(*x);
  } else if (++log.other_count <= kMaxOtherXidsKept) {
    log.xids.push_back(std::move(*x));
  }
}

// /dev/kmsg: one record per read(), EAGAIN at the end (opened non-blocking).
void read_records(int fd, KernelLog& log) {
  std::vector<char> buf(kMaxLine + 1);
  std::size_t bytes = 0;
  for (std::size_t reads = 0;; ++reads) {
    if (reads == kMaxRecords || bytes >= kMaxBytes) {
      log.complete = false;
      return;
    }
    ssize_t const n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EPIPE || errno == EINTR)) continue;  // EPIPE: records overwritten meanwhile (a seq gap)
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN) log.complete = false;  // not the end: something kept the rest from us
      return;
    }
    bytes += static_cast<std::size_t>(n);
    take(log, std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
}

// A recorded log (tests, a saved copy): records one per line, at most kMaxBytes read.
void read_recorded(int fd, KernelLog& log) {
  std::string text;
  std::vector<char> buf(1U << 16);
  for (;;) {
    ssize_t const n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxBytes) {
      log.complete = false;
      break;
    }
    text.append(buf.data(), static_cast<std::size_t>(n));
  }
  bool const complete = log.complete;
  log = kernel_log_of_text(text);
  log.complete = complete;
}

}  // namespace

KernelLog kernel_log_of_text(std::string_view text) {
  KernelLog log;
  log.readable = true;
  while (!text.empty()) {
    auto const nl = text.find('\n');
    auto const line = text.substr(0, nl);
    if (!line.starts_with(' ')) take(log, line);  // a continuation line (key=value) is never a record
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return log;
}

KernelLog read_kernel_log(std::string const& kmsg_path) {
  KernelLog log;
  int const fd = ::open(kmsg_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return log;
  struct stat st {};
  bool const regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  log.readable = true;
  if (regular) read_recorded(fd, log);
  else read_records(fd, log);
  ::close(fd);
  return log;
}

}  // namespace cosmicac::gpu
