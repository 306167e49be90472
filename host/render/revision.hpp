// What names a job's content: the user-data Secret's name and the job's
// revision are digests of what was rendered, so a change of content is a
// change of name — of the VM's template — and nothing has to be read back
// (no Secret is ever read) to tell that a job changed.
#pragma once

#include "host/base/yaml_json.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cosmicac::host {

// On the rendered VirtualMachine (metadata) and on its template (so each VMI
// KubeVirt starts from it shows which revision it was started from).
inline constexpr char kRevisionAnnotation[] = "cosmicac.io/revision";

// Hex digits of a content digest in a name: 12 (48 bits of SHA-256). Enough
// that two contents of one job never share a name by chance (a job keeps a
// handful), short enough for a label value (the revision is a label too).
inline constexpr std::size_t kDigestHexLength = 12;

// The first kDigestHexLength hex digits of the SHA-256 of `content`.
std::string content_digest(std::string_view content);

// The job's revision: content_digest of the canonical JSON (keys sorted, no
// spaces) of every rendered object of the job, in order, each without the
// revision annotation (so the value is the same on render_manifests' output,
// which carries it, and on objects without it). A profile change (root
// image, bootstrap ConfigMap, mirror) changes it as much as a spec change.
std::string job_revision(std::vector<Json> const& rendered);

// The revision a VirtualMachine (or a VMI made from its template) carries,
// or empty.
std::string revision_of(Json const& object);

}  // namespace cosmicac::host
