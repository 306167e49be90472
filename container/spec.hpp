// The desired container: what `docker run` in the original script asked for,
// as a Docker Engine create body, with a hash label for convergence.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cosmicac::container {

inline constexpr const char* kLabelSpecHash = "org.cosmicac.bootstrap.spec-hash";
inline constexpr const char* kLabelSpec = "org.cosmicac.bootstrap.spec";

struct ContainerSpec {
  std::string name;              // NAME
  std::string image;             // the reference used in the create body (Image)
  std::string image_id;          // sha256:…: part of the hash, so a new pull recreates
  std::string image_digest;      // repo digest, reported only
  std::vector<std::string> env;  // "KEY=VALUE" from ENVS
  std::string mount_point;       // MNT: bound at the same path when set
  bool gpus = false;             // --gpus all
  bool gpu_container = false;    // JOB_TYPE=GPU_CONTAINER: NET_ADMIN + /dev/net/tun
};

// The canonical desired spec: every field that decides the container, Env
// values included (the hash covers them; the label does not show them).
nlohmann::json canonical_spec(ContainerSpec const& spec);

// SHA-256 of canonical_spec(spec).dump().
std::string spec_hash(ContainerSpec const& spec);

// What the spec label holds: the canonical spec with each Env value replaced
// by a short hash of it (names visible, values not).
nlohmann::json spec_label(ContainerSpec const& spec);

// The POST /containers/create body (labels included).
nlohmann::json create_body(ContainerSpec const& spec);

// Names of the fields that differ between two spec labels ("Env" entries as
// "Env:NAME"). A missing/unreadable old label gives {"(no label)"}.
std::vector<std::string> changed_fields(std::string const& old_label, nlohmann::json const& new_label);

}  // namespace cosmicac::container
