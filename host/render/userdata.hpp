// The install user-data: the cloud-init #cloud-config that writes the guest's
// /etc/default/docker-bootstrap and installs cosmicac-bootstrap from the
// bootstrap CD-ROM. Used by the VMI renderer, by `cosmicac-vmi
// render-userdata`, and by the VM test bed (NoCloud seed).
#pragma once

#include "host/spec/job_spec.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cosmicac::host {

// The KEY=VALUE entries of the guest config file, in file order.
std::vector<std::pair<std::string, std::string>> guest_config_entries(JobSpec const& spec);

// The udev rule that links /dev/<kBootCdromLink> to the bootstrap CD-ROM
// drive only (host/spec/guest_layout.hpp).
std::string boot_cdrom_rule_text();

// The systemd unit that mounts the bootstrap ISO (through that link), copies
// the agent out and runs `cosmicac-bootstrap install`.
std::string install_unit_text();

// systemd's path escaping ("/dev/disk/by-label/a-b" → "dev-disk-by\x2dlabel-a\x2db"),
// for the .device unit name the install unit orders itself after.
std::string systemd_escape_path(std::string_view path);

// Where the user-data puts the profile's registryMirrorCA for dockerd:
// /etc/docker/certs.d/<host[:port] of the mirror URL>/ca.crt.
std::string mirror_ca_path(std::string_view mirror_url);

// The whole #cloud-config document. Never fails for a spec that
// parse_job_spec accepted.
std::string render_userdata(JobSpec const& spec);

}  // namespace cosmicac::host
