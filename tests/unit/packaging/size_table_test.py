"""packaging/size_table.py: a link map read back into raw bytes per contributor,
and the budget's verdict. The maps are small hand-written excerpts in GNU ld's
format (the release build's real map is read by build-release and checked by
release_test against the binary)."""
import contextlib
import io
import json
import os
import tempfile
import unittest

import size_table

PREFIX = "/var/cache/cosmicac/static-deps/k/lib"
MAP = f"""Archive member included to satisfy reference by file (symbol)

Discarded input sections

 .text.unused   0x0000000000000000      0x999 disk/libcosmicac_disk.a(plan.cpp.o)

Linker script and memory map

LOAD agent/CMakeFiles/cosmicac-bootstrap.dir/main.cpp.o
LOAD {PREFIX}/libcurl.a

.text           0x0000000000401000     0x1400
 .text.main     0x0000000000401000      0x100 agent/CMakeFiles/cosmicac-bootstrap.dir/main.cpp.o
                0x0000000000401000                main
 .text._ZN8cosmicac4disk4planEv
                0x0000000000401100      0x200 disk/libcosmicac_disk.a(plan.cpp.o)
 .text._ZN8nlohmann16json_abi_v3_11_26detail5lexerIiE4scanEv
                0x0000000000401300      0x300 disk/libcosmicac_disk.a(plan.cpp.o)
 .text._ZNSt6vectorIiSaIiEE17_M_realloc_insertEv
                0x0000000000401600       0x80 disk/libcosmicac_disk.a(plan.cpp.o)
 *fill*         0x0000000000401680       0x80
 .text.curl_easy_perform
                0x0000000000401700      0x400 {PREFIX}/libcurl.a(libcurl_la-easy.o)
 .text          0x0000000000401b00      0x900 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)

.rodata         0x0000000000402400      0x100
 .rodata.str1.1
                0x0000000000402400      0x100 disk/libcosmicac_disk.a(plan.cpp.o)
 .rodata.str1.1
                0x0000000000402500      0x100 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)

.bss            0x0000000000403000     0x5000
 .bss           0x0000000000403000     0x5000 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)

.comment        0x0000000000000000       0x27
 .comment       0x0000000000000000       0x27 /usr/lib/x86_64-linux-gnu/libc.a(malloc.o)
"""


class Table(unittest.TestCase):
    def test_contributors_by_archive_module_and_header_only_symbol(self):
        rows = dict(size_table.table(MAP, 0x2000))
        self.assertEqual(rows["agent"], 0x100)
        # A module's own function, and its share of the merged strings (0x200 in
        # the inputs, 0x100 in the output: each mergeable input scaled by half).
        self.assertEqual(rows["disk"], 0x200 + 0x80)
        self.assertEqual(rows["nlohmann/json"], 0x300)
        self.assertEqual(rows["libstdc++ (templates in ours)"], 0x80)
        self.assertEqual(rows["libcurl"], 0x400)
        self.assertEqual(rows["glibc"], 0x900 + 0x80)
        # .bss and .comment take no bytes of the stripped file; what the sections
        # leave (headers, alignment, the fill) is its own row.
        self.assertEqual(sum(rows.values()), 0x2000)
        self.assertEqual(rows["ELF headers, padding"], 0x2000 - 0x1400 - 0x100 + 0x80)

    def test_a_map_larger_than_the_binary_is_refused(self):
        with self.assertRaisesRegex(ValueError, "wrong map"):
            size_table.table(MAP, 0x1000)

    def test_not_a_map(self):
        with self.assertRaisesRegex(ValueError, "not a GNU ld map"):
            size_table.table("LOAD x.o\n", 100)

    def test_lto_partition_charged_by_symbol_and_its_unnamed_bytes_shared(self):
        ltrans = "/tmp/ccX.ltrans0.ltrans.o"
        lto_map = f"""Linker script and memory map

.text           0x0000000000401000      0x700
 .text._ZN8cosmicac6engine6Client7performEv.constprop.0
                0x0000000000401000      0x300 {ltrans}
 .text._ZN8cosmicac3log5setupEb
                0x0000000000401300      0x100 {ltrans}
 .text._ZN3fmt2v96detail5writeEv
                0x0000000000401400      0x200 {ltrans}
 .text.main     0x0000000000401600      0x100 {ltrans}

.eh_frame       0x0000000000402000      0x700
 .eh_frame      0x0000000000402000      0x700 {ltrans}
"""
        rows = dict(size_table.table(lto_map, 0x1000))
        # 0x700 bytes of unwind tables, shared out 3:1:2:1 like the code.
        self.assertEqual(rows["engine"], 0x300 * 2)
        self.assertEqual(rows["common"], 0x100 * 2)
        self.assertEqual(rows["fmt"], 0x200 * 2)
        self.assertEqual(rows["agent"], 0x100 * 2)
        self.assertEqual(rows["ELF headers, padding"], 0x200)

    def test_render_lists_largest_first_with_the_packed_total(self):
        text = size_table.render([("glibc", 600), ("disk", 300), ("ELF headers, padding", 100)], 1000, 400)
        lines = text.splitlines()
        self.assertRegex(lines[1], r"^glibc +library +600 +60\.0%$")
        self.assertRegex(lines[2], r"^disk +ours +300 +30\.0%$")
        self.assertRegex(lines[-1], r"^packed \(UPX LZMA, lc=7 pb=2\) +400 +40\.0%$")

    def test_cli_writes_the_json_the_release_test_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = {n: os.path.join(tmp, n) for n in ("map", "bin", "packed", "json")}
            with open(paths["map"], "w") as f:
                f.write(MAP)
            for name, size in (("bin", 0x2000), ("packed", 0x900)):
                with open(paths[name], "wb") as f:
                    f.write(b"\0" * size)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                size_table.main([paths["map"], paths["bin"], "--packed", paths["packed"], "--json", paths["json"],
                                 "--counted", str(size_table.BUDGET + 2)])
            with open(paths["json"]) as f:
                got = json.load(f)
        self.assertEqual((got["raw"], got["packed"]), (0x2000, 0x900))
        self.assertEqual(got["contributors"]["libcurl"], 0x400)
        self.assertIn("ConfigMap: 880002 bytes counted, budget 880000, headroom -2", out.getvalue())
        self.assertIn("OVER BUDGET: the ConfigMap counts 880,002 bytes", out.getvalue())


class Budget(unittest.TestCase):
    SIZES = {"glibc": 900, "libsystemd": 240, "disk": 90, "libcurl": 110, "agent": 150, "fmt": 50,
             "ELF headers, padding": 5000}

    def test_within_the_budget_no_verdict(self):
        self.assertIsNone(size_table.budget_verdict(size_table.BUDGET, self.SIZES))
        self.assertEqual(size_table.BUDGET, 880_000)

    def test_over_the_budget_names_the_five_largest_contributors(self):
        verdict = size_table.budget_verdict(size_table.BUDGET + 1, self.SIZES)
        self.assertIn("880,001 bytes, 1 over the budget of 880,000", verdict)
        self.assertTrue(verdict.endswith("glibc 900, libsystemd 240, agent 150, libcurl 110, disk 90"), verdict)
        self.assertNotIn("fmt", verdict)  # the sixth
        self.assertNotIn("ELF", verdict)  # not a contributor one could shrink


if __name__ == "__main__":
    unittest.main()
