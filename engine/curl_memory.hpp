// libcurl's allocator for this process: every block it frees is zeroed first,
// so no freed copy of a secret it handled (the X-Registry-Auth header, the
// /auth body) lingers in the heap. Used by engine/ and container/probe.cpp.
#pragma once

namespace cosmicac::engine {

// Installs the allocator (curl_global_init_mem) once, before any other libcurl call.
void init_curl_once();

}  // namespace cosmicac::engine
