"""packaging/configmap.py: the size rule of the API server, and YAML that reads
back to exactly the input (parsed with python3-yaml, not by our own code)."""
import base64
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

import configmap
from configmap import ENCODED_LIMIT, LIMIT, ConfigMapError, counted_size, render

TOOL = os.path.join(os.path.dirname(configmap.__file__), "configmap.py")


def api_server_size(doc):
    """ValidateConfigMap's sum, from the parsed object: len(value) over data
    (Go strings: UTF-8 bytes) plus len(value) over binaryData (decoded []byte)."""
    data = doc.get("data") or {}
    binary = doc.get("binaryData") or {}
    return (sum(len(v.encode("utf-8")) for v in data.values())
            + sum(len(base64.b64decode(v, validate=True)) for v in binary.values()))


class SizeRule(unittest.TestCase):
    def test_data_counts_utf8_bytes_and_binary_counts_decoded_bytes(self):
        self.assertEqual(counted_size({"a": "é\n"}, {"b": b"\x00\xff\x10"}), 3 + 3)

    def test_keys_are_not_counted(self):
        short = counted_size({"k": "x"}, {"b": b"yy"})
        long_keys = counted_size({"k" * 200: "x"}, {"b" * 200: b"yy"})
        self.assertEqual(short, long_keys)
        self.assertEqual(short, 3)

    def test_exactly_at_the_limit_is_accepted(self):
        data = {"unit": "u" * 1000 + "\n"}
        binary = {"bin": b"\x01" * (LIMIT - 1001)}
        text, size = render("cosmic-ac", "bootstrap-cm", data, binary)
        self.assertEqual(size, LIMIT)
        self.assertEqual(api_server_size(yaml.safe_load(text)), LIMIT)

    def test_one_byte_over_the_limit_is_refused(self):
        with self.assertRaises(ConfigMapError) as e:
            render("cosmic-ac", "bootstrap-cm", {"unit": "u\n"}, {"bin": b"\x01" * (LIMIT - 1)})
        self.assertIn("1 over", str(e.exception))

    def test_base64_expansion_is_not_what_counts(self):
        # 800 KiB of binary is ~1.07 MB as base64 in the YAML, yet within the limit.
        text, size = render("ns", "cm", {}, {"bin": os.urandom(800 * 1024)})
        self.assertGreater(len(text), LIMIT)
        self.assertEqual(size, 800 * 1024)


class Rendering(unittest.TestCase):
    SAMPLES = {
        "plain.txt": "[Unit]\nDescription=x\n\n[Service]\nExecStart=/bin/true\n",
        "no-final-newline": "abc",
        "two-final-newlines": "abc\n\n",
        "leading-space": "  indented\nnext\n",
        "trailing-space": "a \nb\n",
        "tabs-and-hash": "#c\n\tx=1 # not a comment\n",
        "unicode": "caf\u00e9 \u2713\n",
        "empty": "",
        "quotes-and-colons": "key: 'v' \"w\" - [x] {y}\n",
    }

    def test_every_value_reads_back_exactly(self):
        binary = {"bin.x": bytes(range(256)) * 3}
        text, size = render("cosmic-ac", "bootstrap-cm", self.SAMPLES, binary)
        doc = yaml.safe_load(text)
        self.assertEqual(doc["apiVersion"], "v1")
        self.assertEqual(doc["kind"], "ConfigMap")
        self.assertEqual(doc["metadata"]["namespace"], "cosmic-ac")
        self.assertEqual(doc["metadata"]["name"], "bootstrap-cm")
        self.assertEqual(doc["data"], self.SAMPLES)
        self.assertEqual(base64.b64decode(doc["binaryData"]["bin.x"]), binary["bin.x"])
        self.assertEqual(api_server_size(doc), size)

    def test_same_input_gives_identical_bytes_with_sorted_keys(self):
        a, _ = render("ns", "cm", {"b": "2\n", "a": "1\n"}, {"z": b"z", "y": b"y"})
        b, _ = render("ns", "cm", {"a": "1\n", "b": "2\n"}, {"y": b"y", "z": b"z"})
        self.assertEqual(a, b)
        self.assertLess(a.index("  a: "), a.index("  b: "))
        self.assertLess(a.index("  y: "), a.index("  z: "))

    def test_invalid_keys_and_names_are_refused(self):
        for key in ("a/b", "..x", "", "a b", "x" * 254):
            with self.assertRaises(ConfigMapError, msg=key):
                render("ns", "cm", {key: "v"}, {})
        with self.assertRaises(ConfigMapError):
            render("Bad_NS", "cm", {}, {})
        with self.assertRaises(ConfigMapError):
            render("ns", "cm", {"k": "v"}, {"k": b"v"})


class CommandLine(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)

    def test_writes_the_configmap_and_prints_the_headroom(self):
        with tempfile.TemporaryDirectory() as d:
            binf, unit, out = (os.path.join(d, n) for n in ("bin", "unit", "cm.yaml"))
            with open(binf, "wb") as f:
                f.write(b"\x7fELF" + b"\x00" * 1000)
            with open(unit, "w") as f:
                f.write("[Unit]\n")
            r = self.run_tool("--namespace", "team-a", "--name", "bootstrap-cm", "--out", out,
                              "--binary", f"cosmicac-bootstrap={binf}", "--data", f"x.service={unit}")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"1011 bytes counted, {LIMIT - 1011} bytes of headroom", r.stdout)
            with open(out) as f:
                doc = yaml.safe_load(f)
            self.assertEqual(doc["metadata"]["namespace"], "team-a")
            self.assertEqual(api_server_size(doc), 1011)

    def test_oversized_input_fails_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            binf, out = os.path.join(d, "bin"), os.path.join(d, "cm.yaml")
            with open(binf, "wb") as f:
                f.write(b"\x00" * (LIMIT + 1))
            r = self.run_tool("--namespace", "ns", "--name", "cm", "--out", out, "--binary", f"b={binf}")
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"{LIMIT + 1} bytes, 1 over", r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_non_utf8_data_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            f_, out = os.path.join(d, "f"), os.path.join(d, "cm.yaml")
            with open(f_, "wb") as f:
                f.write(b"\xff\xfe")
            r = self.run_tool("--namespace", "ns", "--name", "cm", "--out", out, "--data", f"k={f_}")
            self.assertEqual(r.returncode, 1)
            self.assertIn("not UTF-8", r.stderr)


class EncodedSize(unittest.TestCase):
    def test_object_over_etcds_request_limit_is_refused_though_counted_size_fits(self):
        # 400 000 control bytes count 400 000 (well under 1 MiB) but are written
        # \u0001 each: 2.4 MB of YAML, which etcd would refuse.
        data = {"x": "\x01" * 400000}
        self.assertLess(counted_size(data, {}), LIMIT)
        with self.assertRaises(ConfigMapError) as e:
            render("ns", "cm", data, {})
        self.assertIn("etcd's default request limit", str(e.exception))

    def test_a_full_megabyte_of_binary_fits_both_limits(self):
        text, size = render("ns", "cm", {}, {"bin": os.urandom(LIMIT - 64)})
        self.assertEqual(size, LIMIT - 64)
        self.assertLess(len(text), ENCODED_LIMIT)


class AgentVersion(unittest.TestCase):
    def test_version_is_a_data_key_and_a_label(self):
        text, size = render("ns", "bootstrap-cm", {"u": "x\n"}, {"b": b"\x00"}, agent_version="1.2.3")
        for loader in (yaml.SafeLoader, yaml.CSafeLoader):
            doc = yaml.load(text, Loader=loader)
            self.assertEqual(doc["data"]["agent-version"], "1.2.3")
            self.assertEqual(doc["metadata"]["labels"]["app.kubernetes.io/version"], "1.2.3")
        self.assertEqual(size, 2 + 1 + len("1.2.3"))

    def test_a_version_that_reads_back_as_a_number_stays_a_string(self):
        text, _ = render("ns", "cm", {}, {}, agent_version="1.10")
        doc = yaml.safe_load(text)
        self.assertEqual(doc["data"]["agent-version"], "1.10")
        self.assertEqual(doc["metadata"]["labels"]["app.kubernetes.io/version"], "1.10")

    def test_invalid_version_or_clashing_key_is_refused(self):
        for bad in ("", "1.0 beta", "-1", "v" * 64, "1.0\n"):
            with self.assertRaises(ConfigMapError, msg=bad):
                render("ns", "cm", {}, {}, agent_version=bad)
        with self.assertRaises(ConfigMapError):
            render("ns", "cm", {"agent-version": "9\n"}, {}, agent_version="1.0")


if __name__ == "__main__":
    unittest.main()
