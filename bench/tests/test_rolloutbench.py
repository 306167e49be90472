"""The rollout benchmark's arithmetic (bench/host/rollout-requests) on hand-made audit events and
output lines. Run: python3 -m unittest discover -s bench/tests"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import rolloutbench  # noqa: E402

USER = "cosmicac-tester"


def event(audit_id, verb, resource, name="", sub="", stage="ResponseComplete", user=USER,
          at="2026-11-28T12:00:00.000000Z"):
    ref = {"resource": resource, "name": name}
    if sub:
        ref["subresource"] = sub
    return json.dumps({"auditID": audit_id, "stage": stage, "verb": verb, "user": {"username": user},
                       "objectRef": ref, "requestReceivedTimestamp": at})


class Requests(unittest.TestCase):
    def test_once_per_audit_id_of_the_user(self):
        lines = [event("a", "watch", "pods", stage="ResponseStarted"), event("a", "watch", "pods"),
                 event("b", "get", "virtualmachines", "j1"), event("c", "get", "pods", user="admin"), "{partial"]
        got = rolloutbench.requests(lines, USER)
        self.assertEqual([(r["verb"], r["resource"]) for r in got], [("watch", "pods"), ("get", "virtualmachines")])

    def test_split_keeps_waits_lists_watches_and_console_logs_apart(self):
        lines = [event("1", "list", "virtualmachineinstances"), event("2", "watch", "datavolumes"),
                 event("3", "get", "pods", "p", sub="log", stage="ResponseStarted"),
                 event("4", "list", "virtualmachines"),
                 event("5", "get", "virtualmachineinstances", "j1"), event("6", "delete", "virtualmachineinstances", "j1"),
                 event("7", "update", "configmaps", "cosmicac-rollout"), event("8", "list", "controllerrevisions")]
        waits, rest, kinds = rolloutbench.split(rolloutbench.requests(lines, USER))
        self.assertEqual(len(waits), 4)
        self.assertEqual(kinds, {"get virtualmachineinstances": 1, "delete virtualmachineinstances": 1,
                                 "update configmaps": 1, "list controllerrevisions": 1})
        self.assertEqual(len(rest), 4)


class AddedPerBatch(unittest.TestCase):
    def test_span_less_the_slowest_vm_of_the_batch(self):
        t = 1_000_000.0
        bs = rolloutbench.batches([
            (t + 0.0, {"event": "batch", "batch": 1, "jobs": ["a"], "state": "started"}),
            (t + 5.0, {"event": "batch", "batch": 1, "state": "done", "ready": 1}),
            (t + 5.1, {"event": "batch", "batch": 2, "jobs": ["b", "c"], "state": "started"}),
            (t + 12.0, {"event": "batch", "batch": 2, "state": "done", "ready": 2}),
            (t + 12.0, {"event": "done", "state": "Complete"})])
        self.assertEqual([b["jobs"] for b in bs], [["a"], ["b", "c"]])
        restarted = {"a": t + 1.0, "b": t + 6.0, "c": t + 6.5}
        # a: an earlier Ready (before its restart) is not this VMI's
        ready = {"a": [t - 30.0, t + 4.0], "b": [t + 9.0], "c": [t + 11.5]}
        got = rolloutbench.added_per_batch(bs, restarted, ready)
        self.assertAlmostEqual(got[0][0], 5.0)
        self.assertAlmostEqual(got[0][1], 3.0)
        self.assertAlmostEqual(got[0][2], 2.0)
        # the second batch's span runs from the first batch's end: the gap between them is the tool's
        self.assertAlmostEqual(got[1][0], 7.0)
        self.assertAlmostEqual(got[1][1], 5.0)
        self.assertAlmostEqual(got[1][2], 2.0)

    def test_a_job_never_seen_ready_leaves_its_batch_out(self):
        bs = [{"batch": 1, "jobs": ["a"], "started": 0.0, "done": 4.0}]
        self.assertEqual(rolloutbench.added_per_batch(bs, {"a": 1.0}, {}), [None])

    def test_restart_time_from_the_tools_delete(self):
        reqs = rolloutbench.requests([event("1", "delete", "virtualmachineinstances", "j1",
                                            at="2026-11-28T12:00:01.500000Z"),
                                      event("2", "delete", "virtualmachineinstances", "j1",
                                            at="2026-11-28T12:00:09.000000Z")], USER)
        got = rolloutbench.restarts(reqs)
        self.assertEqual(list(got), ["j1"])
        self.assertAlmostEqual(got["j1"] - rolloutbench.parse_time("2026-11-28T12:00:00.000000Z"), 1.5)


if __name__ == "__main__":
    unittest.main()
