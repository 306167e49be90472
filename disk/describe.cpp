#include "disk/describe.hpp"

namespace cosmicac::disk {

namespace {

nlohmann::json classification_json(Classification const& c) {
  return {{"kind", std::string(content_kind_name(c.kind))},
          {"summary", c.summary},
          {"partition", c.partition},
          {"fs_type", c.fs_type},
          {"fs_uuid", c.fs_uuid}};
}

}  // namespace

std::string describe(DiskPlan const& plan) {
  std::string out = "Data disk for " + plan.mount_point + "\n";
  out += "  root: " + plan.root + "\n";
  out += "  disks:\n";
  if (plan.candidates.empty()) out += "    (none)\n";
  for (auto const& c : plan.candidates) {
    out += "    " + c.dev_path + "  " + format_size(c.size_bytes) + "  serial " +
           (c.serial.empty() ? std::string("-") : "\"" + c.serial + "\"") + "  " +
           (c.classification ? c.classification->summary : std::string("not probed"));
    if (!c.excluded.empty()) out += "  [excluded: " + c.excluded + "]";
    out += "\n";
  }
  if (plan.chosen)
    out += "  chosen: " + plan.chosen->dev_path + " (" + format_size(plan.chosen->size_bytes) + "): " + plan.why + "\n";
  if (plan.refusal) {
    out += "  refused: " + std::string(reason_name(plan.refusal->reason)) + ": " + plan.refusal->message + "\n";
    out += "  nothing will be written\n";
  } else {
    out += "  actions:\n";
    int i = 0;
    for (auto const& a : plan.actions) out += "    " + std::to_string(++i) + ". " + a.description + "\n";
  }
  return out;
}

nlohmann::json to_json(DiskPlan const& plan) {
  nlohmann::json j;
  j["mount_point"] = plan.mount_point;
  j["root"] = plan.root;
  j["root_disks"] = plan.root_disks;
  j["candidates"] = nlohmann::json::array();
  for (auto const& c : plan.candidates) {
    nlohmann::json cj = {{"name", c.name},
                         {"device", c.dev_path},
                         {"size_bytes", c.size_bytes},
                         {"serial", c.serial},
                         {"excluded", c.excluded.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.excluded)}};
    cj["classification"] = c.classification ? classification_json(*c.classification) : nlohmann::json(nullptr);
    j["candidates"].push_back(std::move(cj));
  }
  if (plan.chosen) {
    j["chosen"] = {{"name", plan.chosen->name},
                   {"device", plan.chosen->dev_path},
                   {"size_bytes", plan.chosen->size_bytes},
                   {"serial", plan.chosen->serial},
                   {"classification", classification_json(plan.chosen->classification)},
                   {"filesystem_device", plan.chosen->device},
                   {"already_mounted", plan.chosen->already_mounted},
                   {"why", plan.why}};
  } else {
    j["chosen"] = nullptr;
  }
  j["actions"] = nlohmann::json::array();
  for (auto const& a : plan.actions)
    j["actions"].push_back({{"kind", std::string(action_kind_name(a.kind))}, {"description", a.description}});
  if (plan.growth)
    j["growth"] = {{"partition", plan.growth->partition},
                   {"write_table", plan.growth->write_table},
                   {"tell_kernel", plan.growth->tell_kernel},
                   {"grow_filesystem", plan.growth->grow_filesystem},
                   {"disk_bytes", plan.growth->disk_bytes},
                   {"partition_from_bytes", plan.growth->partition_from},
                   {"partition_to_bytes", plan.growth->partition_to},
                   {"filesystem_from_bytes", plan.growth->filesystem_from}};
  else j["growth"] = nullptr;
  if (plan.refusal)
    j["refusal"] = {{"reason", std::string(reason_name(plan.refusal->reason))}, {"message", plan.refusal->message}};
  else j["refusal"] = nullptr;
  return j;
}

}  // namespace cosmicac::disk
