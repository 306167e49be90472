#include "host/render/userdata.hpp"

#include "config/config_file.hpp"
#include "config/envs.hpp"
#include "host/base/yaml_json.hpp"
#include "host/render/readiness_probe.hpp"
#include "host/spec/guest_layout.hpp"

#include <cstdio>
#include <string>

namespace cosmicac::host {

std::vector<std::pair<std::string, std::string>> guest_config_entries(JobSpec const& spec) {
  std::vector<std::pair<std::string, std::string>> e;
  e.emplace_back("IMG", spec.container_image);
  e.emplace_back("NAME", spec.container_name);
  if (spec.data_disk) {
    e.emplace_back("MNT", spec.data_disk->mount_point);
    e.emplace_back("DATA_DISK_SERIAL", spec.data_disk->serial);
  }
  if (!spec.job_type.empty()) e.emplace_back("JOB_TYPE", spec.job_type);
  // What the agent's GPU health check counts (the spec bounds both, 1 to 16).
  if (spec.gpu) e.emplace_back("GPU_COUNT", std::to_string(spec.gpu->count));
  if (spec.infiniband) e.emplace_back("IB_COUNT", std::to_string(spec.infiniband->count));
  // What ready means for the container, and how long its first success may take.
  if (spec.readiness)
    for (auto& kv : readiness_settings(*spec.readiness)) e.push_back(std::move(kv));
  else  // the VMI's probe counts this many failed looks: the agent records a failure at the same look
    e.emplace_back("READY_FAILURE_THRESHOLD", std::to_string(kProbeFailureThreshold));
  if (!spec.env.empty()) e.emplace_back("ENVS", config::encode_envs(spec.env).value());  // validated by parse_job_spec
  e.emplace_back("CRED_ISO_LABEL", kCredVolumeLabel);
  if (!spec.registry_mirror.empty()) e.emplace_back("REGISTRY_MIRROR", spec.registry_mirror);  // operator's
  if (!spec.allowed_images.empty()) {                                                          // operator's
    std::string list;
    for (auto const& a : spec.allowed_images) list += (list.empty() ? "" : ",") + a;
    e.emplace_back("ALLOWED_IMAGES", list);
  }
  return e;
}

// dockerd trusts, for a registry host[:port], the CAs in
// /etc/docker/certs.d/<host[:port]>/*.crt (the port as the reference spells
// it); REGISTRY_MIRROR's host passed the agent's registry-host rule (no '/').
std::string mirror_ca_path(std::string_view mirror_url) {
  std::string_view host = mirror_url.substr(mirror_url.find("://") + 3);
  return "/etc/docker/certs.d/" + std::string(host) + "/ca.crt";
}

std::string systemd_escape_path(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || (c == '.' && i > 0);
    if (c == '/') {
      out += '-';
    } else if (plain) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    }
  }
  return out;
}

std::string boot_cdrom_rule_text() {
  std::string t;
  t += "# Written by cosmicac-vmi (cloud-init): /dev/" + std::string(kBootCdromLink) + " for the bootstrap CD-ROM\n";
  t += "# (label " + std::string(kBootVolumeLabel) + ") only: a disk with that label never gets it.\n";
  t += "ACTION!=\"remove\", SUBSYSTEM==\"block\", KERNEL==\"sr[0-9]*\", ENV{ID_FS_TYPE}==\"iso9660\", "
       "ENV{ID_FS_LABEL_ENC}==\"" +
       std::string(kBootVolumeLabel) + "\", SYMLINK+=\"" + kBootCdromLink + "\"\n";
  return t;
}

std::string install_unit_text() {
  std::string dev = std::string("/dev/") + kBootCdromLink;
  std::string dev_unit = systemd_escape_path(dev) + ".device";
  std::string mnt = kIsoMountPoint;
  std::string t;
  t += "# Written by cosmicac-vmi (cloud-init): installs cosmicac-bootstrap from the\n";
  t += "# bootstrap CD-ROM (ConfigMap volume, label " + std::string(kBootVolumeLabel) + ", through the udev rule\n";
  t += "# " + std::string(kBootCdromRule) + ") on every boot, so that\n";
  t += "# the ConfigMap stays the source of the agent binary. Idempotent.\n";
  t += "[Unit]\n";
  t += "Description=Install cosmicac-bootstrap from the bootstrap CD-ROM\n";
  t += "Requires=" + dev_unit + "\n";
  t += "After=" + dev_unit + "\n";
  t += "\n[Service]\n";
  t += "Type=oneshot\n";
  t += "ExecStartPre=/bin/mkdir -p " + mnt + "\n";
  // A crash may have left the ISO mounted: unmount first, ignoring "not mounted".
  t += "ExecStartPre=-/bin/umount " + mnt + "\n";
  t += "ExecStartPre=/bin/mount -t iso9660 -o ro,nosuid,nodev,noexec " + dev + " " + mnt + "\n";
  // ISO files may lack the exec bit: copy with an explicit mode.
  t += "ExecStartPre=/usr/bin/install -m 0755 " + mnt + "/" + kAgentIsoFile + " " + kAgentPath + "\n";
  t += "ExecStart=" + std::string(kAgentPath) + " install\n";
  t += "ExecStopPost=-/bin/umount " + mnt + "\n";
  t += "\n[Install]\n";
  t += "WantedBy=multi-user.target\n";
  return t;
}

std::string render_userdata(JobSpec const& spec) {
  std::string header = "Written by cosmicac-vmi for job " + spec.ns + "/" + spec.name +
                       ". Read as data by cosmicac-bootstrap, never sourced by a shell.";
  Json files = Json::array();
  files.push_back(Json{{"path", kGuestConfigPath},
                       {"owner", "root:root"},
                       {"permissions", "0600"},  // ENVS may carry API keys
                       {"content", config::encode_config_file(guest_config_entries(spec), header)}});
  if (!spec.registry_mirror_ca.empty())
    files.push_back(Json{{"path", mirror_ca_path(spec.registry_mirror)},
                         {"owner", "root:root"},
                         {"permissions", "0644"},  // a CA certificate: public
                         {"content", spec.registry_mirror_ca}});
  files.push_back(Json{{"path", kBootCdromRule},
                       {"owner", "root:root"},
                       {"permissions", "0644"},
                       {"content", boot_cdrom_rule_text()}});
  files.push_back(Json{{"path", std::string("/etc/systemd/system/") + kInstallUnit},
                       {"owner", "root:root"},
                       {"permissions", "0644"},
                       {"content", install_unit_text()}});
  Json doc = Json::object();
  doc["write_files"] = files;
  // Why runcmd and not a .wants/ symlink: write_files cannot create symlinks,
  // and a unit enabled after systemd computed the boot transaction would not
  // start until the next boot anyway. `enable` keeps it for later boots (the
  // ConfigMap may carry a newer agent); `--now --no-block` starts it without
  // cloud-final waiting on it. cloud-init runs this argv list through /bin/sh
  // with every word quoted; the words are constants, no spec data reaches it.
  // The udev rule arrives after udev has seen the CD-ROMs at boot: a change
  // event (and waiting for it) makes the link before the unit looks for it.
  // Later boots have the rule from the start.
  doc["runcmd"] = Json::array({Json::array({"udevadm", "trigger", "--settle", "--action=change",
                                            "--subsystem-match=block", "--sysname-match=sr*"}),
                               Json::array({"systemctl", "enable", "--now", "--no-block", kInstallUnit})});
  return "#cloud-config\n" + to_yaml(doc);
}

}  // namespace cosmicac::host
