#include "common/systemd_manager.hpp"

#include "common/utf8.hpp"

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include <cstring>
#include <memory>

namespace cosmicac::systemd {
namespace {

constexpr const char* kDest = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";

struct BusDeleter {
  void operator()(sd_bus* b) const { sd_bus_flush_close_unref(b); }
};
using BusPtr = std::unique_ptr<sd_bus, BusDeleter>;

Result<BusPtr> open_bus() {
  sd_bus* raw = nullptr;
  int r = sd_bus_open_system(&raw);
  if (r < 0)
    return make_error(Reason::Internal, std::string("cannot connect to the system bus: ") + std::strerror(-r), true);
  return BusPtr(raw);
}

Error bus_error(std::string const& what, sd_bus_error const& err, int r) {
  std::string msg = what + ": ";
  msg += err.message ? err.message : std::strerror(-r);
  return make_error(Reason::Internal, std::move(msg), true);
}

}  // namespace

Status reload() {
  auto bus = open_bus();
  if (!bus) return bus.error();
  sd_bus_error err{};  // == SD_BUS_ERROR_NULL (a C compound literal)
  int r = sd_bus_call_method(bus->get(), kDest, kPath, kManager, "Reload", &err, nullptr, "");
  Status res = r < 0 ? Status(bus_error("systemd daemon-reload failed", err, r)) : ok();
  sd_bus_error_free(&err);
  return res;
}

Status enable_unit_files(std::vector<std::string> const& names) {
  auto bus = open_bus();
  if (!bus) return bus.error();
  sd_bus_message* m = nullptr;
  int r = sd_bus_message_new_method_call(bus->get(), &m, kDest, kPath, kManager, "EnableUnitFiles");
  if (r >= 0) r = sd_bus_message_open_container(m, 'a', "s");
  for (auto const& n : names)
    if (r >= 0) r = sd_bus_message_append(m, "s", n.c_str());
  if (r >= 0) r = sd_bus_message_close_container(m);
  if (r >= 0) r = sd_bus_message_append(m, "bb", 0, 1);
  sd_bus_error err{};  // == SD_BUS_ERROR_NULL (a C compound literal)
  if (r >= 0) r = sd_bus_call(bus->get(), m, 0, &err, nullptr);
  sd_bus_message_unref(m);
  Status res =
      r < 0 ? Status(bus_error("enabling " + (names.empty() ? std::string() : names.front()) + " failed", err, r))
            : ok();
  sd_bus_error_free(&err);
  return res;
}

namespace {
// StartUnit / StopUnit(name, "replace"): the same call, another verb.
Status queue_unit_job(char const* method, std::string const& name, std::string const& doing) {
  auto bus = open_bus();
  if (!bus) return bus.error();
  sd_bus_error err{};  // == SD_BUS_ERROR_NULL (a C compound literal)
  sd_bus_message* reply = nullptr;
  int r = sd_bus_call_method(bus->get(), kDest, kPath, kManager, method, &err, &reply, "ss", name.c_str(), "replace");
  Status res = r < 0 ? Status(bus_error(doing + " " + name + " failed", err, r)) : ok();
  sd_bus_message_unref(reply);
  sd_bus_error_free(&err);
  return res;
}
}  // namespace

Status start_unit(std::string const& name) { return queue_unit_job("StartUnit", name, "starting"); }

Status stop_unit(std::string const& name) { return queue_unit_job("StopUnit", name, "stopping"); }

std::string active_state(std::string const& name) {
  auto bus = open_bus();
  if (!bus) return {};
  sd_bus_error err{};  // == SD_BUS_ERROR_NULL (a C compound literal)
  sd_bus_message* reply = nullptr;
  std::string state;
  int r = sd_bus_call_method(bus->get(), kDest, kPath, kManager, "LoadUnit", &err, &reply, "s", name.c_str());
  const char* path = nullptr;
  if (r >= 0 && sd_bus_message_read(reply, "o", &path) >= 0 && path) {
    char* value = nullptr;
    sd_bus_error err2{};  // == SD_BUS_ERROR_NULL (a C compound literal)
    if (sd_bus_get_property_string(bus->get(), kDest, path, "org.freedesktop.systemd1.Unit", "ActiveState", &err2,
                                   &value) >= 0 &&
        value) {
      state = value;
      free(value);  // NOLINT: sd-bus hands out malloc'd strings
    }
    sd_bus_error_free(&err2);
  }
  sd_bus_message_unref(reply);
  sd_bus_error_free(&err);
  return state;
}

std::string notify_field(std::string_view key, std::string_view value) {
  std::string v;
  for (std::size_t i = 0; i < value.size() && v.size() <= kNotifyValueMax;) {
    auto const ch = utf8_decode(value.substr(i));
    auto const c = static_cast<unsigned char>(value[i]);
    bool const c1 = ch.code_point >= 0x80 && ch.code_point <= 0x9F;
    if (c == '\t' || c == '\n' || c == '\r') v += ' ';
    else if (ch.length == 0 || c < 0x20 || c == 0x7F || c1) v += '?';
    else v.append(value.substr(i, ch.length));
    i += ch.length == 0 ? 1 : ch.length;
  }
  if (v.size() > kNotifyValueMax) {
    constexpr std::string_view kCut = "…";
    v.resize(utf8_cut(v, kNotifyValueMax - kCut.size()).size());
    v += kCut;
  }
  return std::string(key) + "=" + v;
}

void notify_status(std::string_view status) { sd_notify(0, notify_field("STATUS", status).c_str()); }

void notify_failed(Error const& error) {
  notify_status("failed: " + std::string(reason_name(error.reason)) + ": " + error.message);
}

void notify_ready(std::string_view status) {
  sd_notify(0, (notify_field("READY", "1") + "\n" + notify_field("STATUS", status)).c_str());
}

}  // namespace cosmicac::systemd
