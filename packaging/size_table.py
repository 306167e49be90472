#!/usr/bin/python3
"""Where the static agent's bytes are: reads GNU ld's link map (-Wl,-Map) of the
release binary and prints the raw bytes each contributor puts into the file,
largest first.

A contributor is a library (the static archives from packaging/static-deps,
glibc, libstdc++, libgcc, libcap) or a module of ours (libcosmicac_<module>.a;
main.cpp counts as `agent`). The header-only libraries (nlohmann/json, fmt,
spdlog, Boost) have no archive: their code is instantiated inside our objects,
so a section of one of our objects is charged by the symbol it holds (the
release build compiles with -ffunction-sections -fdata-sections, so each
function and object has its own section named after its mangled symbol):
nlohmann::, fmt::, spdlog::, boost:: to that library, std:: templates to
`libstdc++ (templates in ours)` unless their arguments name one of the above.

The release build links with -flto: the LTO partitions (ltrans objects) hold
the code of our modules, of the header-only libraries and of libcurl and
libsystemd (their archives carry LTO bytecode) together. A section of a
partition is charged by its symbol: C++ names by namespace (cosmicac::<module>
to that module, cosmicac::log/mnt/systemd and cosmicac:: itself to common, the
header-only libraries as above), C names by the static archive that defines
them (nm on the archives the map loaded; LTO's suffixes such as .constprop.0
dropped). A partition's sections without a symbol (merged strings, unwind
tables) are shared out in proportion to what each contributor has in it.

Only what occupies the file is counted (allocated sections that are not
NOBITS: .bss and .tbss take no bytes); the rest of the raw size (ELF headers,
alignment between output sections) is the row `ELF headers, padding`.

Build-time tool (Debian's python3, standard library and binutils' c++filt).

The budget: the bootstrap-cm ConfigMap may count at most BUDGET bytes (the API
server's hard limit is 1 MiB; the rest is room for the next features).
budget_verdict() says why a release is over it, naming the largest
contributors; tests/unit/packaging/release_test.py fails with that message.

usage: size_table.py MAP RAW_BINARY [--packed PACKED] [--json OUT] [--counted N]
  --counted N   the ConfigMap's counted bytes: print them against the budget
"""
import argparse
import json
import os
import re
import subprocess
import sys

BUDGET = 880_000  # bytes counted in the ConfigMap (issue 37)
TOP = 5  # contributors named when over the budget

# Output sections that hold no file bytes, or are not loaded (stripped by -s).
_NOT_IN_FILE = re.compile(r"^\.(bss|tbss|lbss|comment|debug|stab|gnu\.attributes|gnu_debug|note\.stapsdt|symtab|strtab|shstrtab)")

_ARCHIVES = {
    "libc.a": "glibc", "libm.a": "glibc", "libm-2.36.a": "glibc", "libmvec.a": "glibc", "librt.a": "glibc",
    "libpthread.a": "glibc", "crt1.o": "glibc", "crti.o": "glibc", "crtn.o": "glibc",
    "libstdc++.a": "libstdc++", "libgcc.a": "libgcc", "libgcc_eh.a": "libgcc", "crtbeginT.o": "libgcc",
    "crtend.o": "libgcc", "libcap.a": "libcap", "libcurl.a": "libcurl", "libsystemd.a": "libsystemd",
    "libmount.a": "libmount", "libblkid.a": "libblkid", "libfdisk.a": "libfdisk", "libuuid.a": "libuuid",
}
_HEADER_ONLY = (("nlohmann::", "nlohmann/json"), ("spdlog::", "spdlog"), ("fmt::", "fmt"), ("boost::", "Boost"))
_OURS = re.compile(r"libcosmicac_([a-z_]+)\.a\(")
_SYMBOL = re.compile(r"^\.(?:text|rodata|data\.rel\.ro|data|gcc_except_table|tdata)(?:\.(?:unlikely|hot|startup|exit|local))?\.(_Z\S+)$")


def parse_map(text):
    """The input sections of the memory map, (output section, input section, size, file), and
    each output section's size."""
    found = re.search(r"^Linker script and memory map$", text, re.M)
    if not found:
        raise ValueError("not a GNU ld map: no 'Linker script and memory map'")
    start = found.start()
    inputs, out_sizes = [], {}
    out_section = None
    pending = None  # a section name whose address/size(/file) are on the next line
    for line in text[start:].splitlines():
        m = re.match(r"^([._A-Za-z]\S*)(?:\s+0x[0-9a-f]+\s+0x([0-9a-f]+))?\s*$", line)
        if m:
            out_section, pending = m.group(1), None
            if m.group(2):
                out_sizes[out_section] = out_sizes.get(out_section, 0) + int(m.group(2), 16)
            else:
                pending = "<output>"
            continue
        m = re.match(r"^ (\.\S+|COMMON|[_A-Za-z]\S*)\s*$", line)
        if m and not line.startswith(" *"):
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+|COMMON)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)(?:\s+(\S.*))?$", line)
        if m and pending == "<output>" and not m.group(1) and not m.group(3):
            out_sizes[out_section] = out_sizes.get(out_section, 0) + int(m.group(2), 16)
        elif m and m.group(3) and (m.group(1) or pending):
            inputs.append((out_section, m.group(1) or pending, int(m.group(2), 16), m.group(3)))
        elif re.match(r"^ \*fill\*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line):
            inputs.append((out_section, "*fill*", int(line.split()[2], 16), "*fill*"))
        pending = None
    return inputs, out_sizes


def file_bytes(inputs, out_sizes):
    """The input sections that occupy the file, each with the bytes it has there: within an
    output section whose inputs add up to more than it holds (the linker merged duplicate
    strings and constants of SEC_MERGE sections, .rodata.str*/.rodata.cst*), the mergeable
    inputs are scaled down to what is left."""
    kept = [r for r in inputs if r[0] and not _NOT_IN_FILE.match(r[0]) and r[2]]
    by_out = {}
    for r in kept:
        by_out.setdefault(r[0], []).append(r)
    out = []
    for name, rows in by_out.items():
        total = sum(r[2] for r in rows)
        size = out_sizes.get(name, total)
        merge = [r for r in rows if re.match(r"^\.rodata\.(str|cst)", r[1])]
        scale = 1.0
        if total > size:
            mergeable = sum(r[2] for r in merge)
            scale = max(0.0, (size - (total - mergeable)) / mergeable) if mergeable else size / total
            merge = merge if mergeable else rows
        ids = {id(r) for r in merge}
        out.extend((r[1], r[2] * scale if id(r) in ids else r[2], r[3]) for r in rows)
    return out


def _strip_nested(name):
    """The demangled name with every <...> and (...) removed: its qualified head."""
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def header_only_owner(demangled):
    """The header-only library a symbol of our objects belongs to, or None (ours)."""
    head = _strip_nested(demangled)
    head = head.split(" ")[-1] if not head.startswith(("typeinfo", "vtable", "guard", "construction")) else head
    for prefix, lib in _HEADER_ONLY:
        if prefix in head:
            return lib
    if "std::" in head or head.startswith(("__gnu_cxx::", "__cxx")):
        for prefix, lib in _HEADER_ONLY:
            if prefix in demangled:
                return lib
        return None if "cosmicac::" in demangled else "libstdc++ (templates in ours)"
    return None


def demangle(symbols):
    if not symbols:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(symbols), capture_output=True, text=True, check=True).stdout
    return dict(zip(symbols, out.splitlines()))


def contributor_of_file(path):
    m = _OURS.search(path)
    if m:
        return m.group(1)
    if path.endswith("main.cpp.o"):
        return "agent"
    base = os.path.basename(path.split("(")[0])
    if base in _ARCHIVES:
        return _ARCHIVES[base]
    if path == "*fill*":
        return "ELF headers, padding"
    return "other: " + base


_LTRANS = re.compile(r"\.ltrans\d*\.ltrans\.o$|\.ltrans\.o$")
_NAMED = re.compile(r"^\.(?:text|rodata|data\.rel\.ro(?:\.local)?|data|gcc_except_table|tdata)"
                    r"(?:\.(?:unlikely|hot|startup|exit))?\.(.+?)(?:\.str\d+\.\d+|\.cst\d+)?$")
_LTO_SUFFIX = re.compile(r"\.(?:lto_priv|constprop|isra|part|cold|localalias|llvm)(?:\.\d+)?")
_MODULES = ("agent", "config", "container", "disk", "engine", "gpu", "readiness", "registry")
_COMMON_NS = re.compile(r"cosmicac::(?:(log|mnt|systemd)::|[a-z_]+(?:\(|<|$| ))")


def loaded_archives(map_text):
    """The static archives of packaging/static-deps the link loaded, by contributor."""
    out = {}
    for m in re.finditer(r"^LOAD (\S+\.a)$", map_text, re.M):
        lib = _ARCHIVES.get(os.path.basename(m.group(1)))
        if lib in ("libcurl", "libsystemd", "libmount", "libblkid", "libfdisk", "libuuid"):
            out[lib] = m.group(1)
    return out


def c_symbol_owners(archives):
    """name -> contributor for every symbol (local ones too) the archives define."""
    owners = {}
    for lib, path in sorted(archives.items()):
        out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                owners.setdefault(parts[2], set()).add(lib)
    return {name: libs.pop() for name, libs in owners.items() if len(libs) == 1}


def module_of(demangled):
    """Our module a demangled C++ name belongs to, or None."""
    for mod in _MODULES:
        if f"cosmicac::{mod}::" in demangled:
            return mod
    return "common" if _COMMON_NS.search(demangled) or "cosmicac::" in demangled else None


def lto_owner(symbol, names, c_owners):
    """The contributor of a named section of an LTO partition, or None (unknown)."""
    base = _LTO_SUFFIX.sub("", symbol)
    if base in ("main", "_ZN9__gnu_cxx27__verbose_terminate_handlerEv"):
        return "agent"
    if base.startswith("_Z"):
        d = names.get(base, base)
        return header_only_owner(d) or module_of(d)
    return c_owners.get(base)


def table(map_text, raw_size):
    rows = file_bytes(*parse_map(map_text))
    lto = [r for r in rows if _LTRANS.search(r[2])]
    symbols = set()
    for sec, _, path in rows:
        m = _NAMED.match(sec) if _LTRANS.search(path) else _SYMBOL.match(sec)
        if m and (_ours(path) or _LTRANS.search(path)):
            base = _LTO_SUFFIX.sub("", m.group(1))
            if base.startswith("_Z"):
                symbols.add(base)
    names = demangle(sorted(symbols))
    c_owners = c_symbol_owners(loaded_archives(map_text)) if lto else {}
    sizes, unnamed = {}, {}
    for sec, size, path in rows:
        if _LTRANS.search(path):
            m = _NAMED.match(sec)
            who = lto_owner(m.group(1), names, c_owners) if m else None
            if who is None:
                unnamed.setdefault(path, []).append(size)
                continue
            unnamed.setdefault(path, [])
            sizes.setdefault(path, {})
            sizes[path][who] = sizes[path].get(who, 0) + size
            continue
        who = contributor_of_file(path)
        m = _SYMBOL.match(sec)
        if m and _ours(path):
            who = header_only_owner(names.get(m.group(1), m.group(1))) or who
        sizes[who] = sizes.get(who, 0) + size
    totals = {k: v for k, v in sizes.items() if not isinstance(v, dict)}
    for path, rest in unnamed.items():
        named = sizes.get(path, {})
        total_named = sum(named.values())
        for who, size in named.items():
            share = size + (sum(rest) * size / total_named if total_named else 0)
            totals[who] = totals.get(who, 0) + share
        if not total_named:
            totals["LTO (unattributed)"] = totals.get("LTO (unattributed)", 0) + sum(rest)
    totals = {k: round(v) for k, v in totals.items()}
    counted = sum(totals.values())
    if counted > raw_size:
        raise ValueError(f"the map counts {counted} bytes, more than the binary's {raw_size}: wrong map?")
    totals["ELF headers, padding"] = totals.get("ELF headers, padding", 0) + raw_size - counted
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def _ours(path):
    m = _OURS.search(path)
    return (m.group(1),) if m else (("agent",) if path.endswith("main.cpp.o") else ())


def module_kind(name):
    if name in _ARCHIVES.values() or name in [lib for _, lib in _HEADER_ONLY] or name.startswith(("libstdc++", "ELF", "other")):
        return "library" if not name.startswith(("ELF", "other")) else ""
    return "ours"


def render(rows, raw_size, packed_size=None):
    lines = [f"{'contributor':<34} {'kind':<8} {'raw bytes':>10} {'share':>6}"]
    for name, size in rows:
        lines.append(f"{name:<34} {module_kind(name):<8} {size:>10} {size * 100.0 / raw_size:>5.1f}%")
    lines.append(f"{'total (raw, stripped)':<34} {'':<8} {raw_size:>10} {100.0:>5.1f}%")
    if packed_size is not None:
        lines.append(f"{'packed (UPX LZMA, lc=7 pb=2)':<34} {'':<8} {packed_size:>10} {packed_size * 100.0 / raw_size:>5.1f}%")
    return "\n".join(lines)


def budget_verdict(counted, contributors, budget=BUDGET):
    """None within the budget; otherwise the message that names the TOP largest
    contributors (raw bytes; `contributors` maps a name to its bytes)."""
    if counted <= budget:
        return None
    top = sorted(((size, name) for name, size in contributors.items() if not name.startswith("ELF")),
                 key=lambda t: (-t[0], t[1]))[:TOP]
    names = ", ".join(f"{name} {size:,}" for size, name in top)
    return (f"the ConfigMap counts {counted:,} bytes, {counted - budget:,} over the budget of {budget:,}; "
            f"largest contributors (raw bytes): {names}")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("map")
    p.add_argument("raw")
    p.add_argument("--packed")
    p.add_argument("--json")
    p.add_argument("--counted", type=int)
    a = p.parse_args(argv)
    with open(a.map, encoding="utf-8", errors="replace") as f:
        text = f.read()
    raw_size = os.path.getsize(a.raw)
    packed_size = os.path.getsize(a.packed) if a.packed else None
    rows = table(text, raw_size)
    print(render(rows, raw_size, packed_size))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"raw": raw_size, "packed": packed_size, "contributors": dict(rows)}, f, indent=1)
            f.write("\n")
    if a.counted is not None:
        print(f"ConfigMap: {a.counted} bytes counted, budget {BUDGET}, headroom {BUDGET - a.counted}")
        verdict = budget_verdict(a.counted, dict(rows))
        if verdict:
            print(f"OVER BUDGET: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
