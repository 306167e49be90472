"""The host benchmark's arithmetic (bench/host/run) on hand-made audit events.
Run: python3 -m unittest discover -s bench/tests"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import hostbench  # noqa: E402


def event(user, stage="ResponseComplete", verb="get", uri="/api", code=200):
    return json.dumps({"kind": "Event", "stage": stage, "verb": verb, "requestURI": uri,
                       "user": {"username": user}, "responseStatus": {"code": code}})


class CountRequests(unittest.TestCase):
    def test_one_event_per_request_of_the_user(self):
        lines = [event("bench"), event("bench", stage="ResponseStarted"), event("admin"),
                 event("bench", verb="patch", uri="/apis/kubevirt.io/v1/x", code=201),
                 event("bench", stage="Panic"), '{"partial', ""]
        self.assertEqual(hostbench.count_requests(lines, "bench"), 3)
        self.assertEqual(hostbench.count_requests(lines, "nobody"), 0)
        self.assertEqual(hostbench.verbs(lines, "bench")[1], "PATCH /apis/kubevirt.io/v1/x -> 201")


class Summary(unittest.TestCase):
    def test_medians_and_ratios(self):
        runs = {("ours", "first"): [(5, 0.30), (5, 0.10), (6, 0.20)],
                ("base", "first"): [(10, 0.40), (12, 0.80), (11, 0.60)]}
        s = hostbench.summarize(runs)
        self.assertEqual(s[("ours", "first")], (5, 0.20, 3))
        self.assertEqual(s[("base", "first")], (11, 0.60, 3))
        self.assertAlmostEqual(hostbench.ratio(5, 11), 5 / 11)
        self.assertIsNone(hostbench.ratio(5, 0))
        self.assertIsNone(hostbench.ratio(None, 3))
        tab = hostbench.table(s, ("ours", "base"), ("first",), "base").split("\n")
        self.assertEqual(tab[2], "| first | ours | 5 | 200 | 0.45 | 0.33 | 3 |")
        self.assertEqual(tab[3], "| first | base | 11 | 600 | 1.00 | 1.00 | 3 |")

    def test_even_number_of_runs_takes_the_mean_of_the_middle_two(self):
        self.assertEqual(hostbench.median([4, 1, 3, 2]), 2.5)
        self.assertIsNone(hostbench.median([]))


class ReplaceSection(unittest.TestCase):
    def test_replaces_only_its_own_section(self):
        readme = "# T\n\n## A\n\nold a\n\n## Host\n\nold table\n\n## C\n\nc\n"
        out = hostbench.replace_section(readme, "Host", "new table")
        self.assertEqual(out, "# T\n\n## A\n\nold a\n\n## Host\n\nnew table\n\n## C\n\nc\n")

    def test_appends_when_absent(self):
        self.assertEqual(hostbench.replace_section("# T\n", "Host", "x"), "# T\n\n## Host\n\nx\n")


if __name__ == "__main__":
    unittest.main()
