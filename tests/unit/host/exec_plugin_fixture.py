#!/usr/bin/python3
"""A kubeconfig exec credential plugin for the tests (never a real one).

Each run appends {"argv": [...], "env": {...}} as one JSON line to
$FIXTURE_RECORD, then answers with the response numbered by the runs so far
(the last one repeats) from the JSON list in $FIXTURE_RESPONSES:
{"stdout": "...", "stderr": "...", "exit": 0}.
"""
import json
import os
import sys

record = os.environ["FIXTURE_RECORD"]
with open(record, "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv, "env": dict(os.environ)}) + "\n")
with open(record, encoding="utf-8") as f:
    run = sum(1 for _ in f) - 1
with open(os.environ["FIXTURE_RESPONSES"], encoding="utf-8") as f:
    responses = json.load(f)
r = responses[min(run, len(responses) - 1)]
sys.stderr.write(r.get("stderr", ""))
sys.stdout.write(r.get("stdout", ""))
sys.exit(r.get("exit", 0))
