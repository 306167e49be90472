// Typed values of the configuration file: sizes, durations, booleans,
// paths and names. Each returns a short problem description (never the value)
// on failure, which settings.cpp prefixes with the origin, line and key.
#pragma once

#include "common/error.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace cosmicac::config {

// "100G", "100GiB", "100GB", "1T", "512M", "4096": binary units (K=2^10 …
// E=2^60), case-insensitive, with an optional "B" or "iB"; plain = bytes.
Result<std::uint64_t> parse_size(std::string_view text);

// "60", "60s", "5m", "1h": whole seconds, minutes or hours.
Result<std::chrono::seconds> parse_duration(std::string_view text);

// yes/no/true/false/1/0 (case-insensitive).
Result<bool> parse_bool(std::string_view text);

// The data disk's mount point (MNT, dataDisk.mountPoint), lexically normalised
// ("//data/./x/" → "/data/x"). An allow-list: /data, /models, /scratch, or one
// name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 64) below them or below /mnt or
// /srv, except the names the guest mounts itself (/mnt/registrycred,
// /mnt/bootstrap, cosmicac*). Refuses "..", whitespace and control characters.
Result<std::string> normalise_mount_point(std::string_view text);

// A Docker container name: [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 128 characters.
bool valid_container_name(std::string_view name) noexcept;

}  // namespace cosmicac::config
