#!/usr/bin/python3
"""Validates Jepsen histories (the JSON form elle-cli reads) against a schema,
tests/jepsen/cas-register-history.schema.json or mutex-history.schema.json, plus what a JSON schema cannot say: "index" is
each entry's position, "time" never goes back, and each process alternates :invoke with a
completion of the same f (and after :info never appears again).

usage: validate.py SCHEMA HISTORY.json...   (exit 0: all valid; 1: the first problem printed)
"""
import json
import sys

import jsonschema


def problems(history):
    open_ops, retired, last_time = {}, set(), 0
    for i, e in enumerate(history):
        where = f"entry {i}"
        if e["index"] != i:
            yield f"{where}: index {e['index']}"
        if e["time"] < last_time:
            yield f"{where}: time goes back"
        last_time = e["time"]
        p = e["process"]
        if p in retired:
            yield f"{where}: process {p} appears after its :info"
        if e["type"] == "invoke":
            if p in open_ops:
                yield f"{where}: process {p} invokes with an operation outstanding"
            open_ops[p] = e["f"]
        else:
            if open_ops.get(p) != e["f"]:
                yield f"{where}: a completion of process {p} with no :invoke of {e['f']}"
            open_ops.pop(p, None)
            if e["type"] == "info":
                retired.add(p)


def main():
    schema = json.load(open(sys.argv[1]))
    validator = jsonschema.Draft202012Validator(schema)
    for path in sys.argv[2:]:
        history = json.load(open(path))
        for error in validator.iter_errors(history):
            print(f"{path}: {error.json_path}: {error.message}")
            return 1
        for problem in problems(history):
            print(f"{path}: {problem}")
            return 1
    print(f"{len(sys.argv) - 2} histories valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
