#!/usr/bin/env python3
"""Extract the Lua script constants of the seed diffs, byte for byte.

Provenance tool, run by hand, not by the build: it reconstructs the old and the new side
of each diff, finds every `const NAME = \`...\`;` template literal whose NAME ends in
_SCRIPT or _LUA, and prints, per side, the script text with the line numbers that the
hunk headers promise. Lines hidden between hunks are reported as GAP so that a human
restores them (and records how) in manifest.json.

usage: extract_from_seeds.py [SEEDS_DIR [OUT_DIR]]  (writes <system>/<version>/<CONSTANT>.lua and manifest.json)
"""
import re, sys, os

def sides(path):
    """Return {'old': {lineno: text}, 'new': {lineno: text}} for the first file of the diff."""
    old, new = {}, {}
    o = n = None
    for raw in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if m:
            o, n = int(m.group(1)), int(m.group(2))
            continue
        if o is None:
            continue
        if raw.startswith("-"):
            old[o] = raw[1:]; o += 1
        elif raw.startswith("+"):
            new[n] = raw[1:]; n += 1
        elif raw.startswith(" ") or raw == "":
            old[o] = raw[1:]; new[n] = raw[1:]; o += 1; n += 1
        else:
            o = n = None  # next file header
    return {"old": old, "new": new}

def scripts(lines):
    out = {}
    nums = sorted(lines)
    i = 0
    while i < len(nums):
        ln = nums[i]
        m = re.match(r"^(?:export )?const ([A-Z0-9_]+(?:_SCRIPT|_LUA)) = `$", lines[ln])
        if not m:
            i += 1; continue
        name, body, gaps, j = m.group(1), [], [], ln + 1
        while True:
            if j not in lines:
                gaps.append(j); body.append("<<GAP %d>>" % j); j += 1
                if len(gaps) > 20: break
                continue
            if lines[j] in ("`;", "`"):
                break
            body.append(lines[j]); j += 1
        out[name] = ("\n" + "\n".join(body) + "\n", gaps, ln)
        i = nums.index(j) + 1 if j in lines else i + 1
    return out

def restore(text, donor):
    """Fill <<GAP n>> lines from donor, the same script in another seed, where the lines
    before and after the gap are identical at the same offsets; refuse otherwise."""
    lines, dl = text.split("\n"), donor.split("\n")
    for k, l in enumerate(lines):
        if l.startswith("<<GAP"):
            if k >= len(dl) or "<<GAP" in dl[k]:
                raise SystemExit("cannot restore line %d" % k)
            lines[k] = dl[k]
    # The neighbours of every restored run must agree with the donor.
    for k, l in enumerate(text.split("\n")):
        if not l.startswith("<<GAP") and k < len(dl) and l != dl[k] and any(
                x.startswith("<<GAP") for x in text.split("\n")[max(0, k - 1):k + 2]):
            raise SystemExit("donor differs next to a gap at line %d" % k)
    return "\n".join(lines)

SEEDS = "../../../shared/seeds"
# (directory, seed file prefix, side, package, version)
PLAN = [
    ("state/beta23", "000", "old", "@apifuse/provider-sdk", "2.2.0-beta.23", "package/src/runtime/state.ts"),
    ("state/beta24", "000", "new", "@apifuse/provider-sdk", "2.2.0-beta.24", "package/src/runtime/state.ts"),
    ("state/beta30", "001", "new", "@apifuse/provider-sdk", "2.2.0-beta.30", "package/src/runtime/state.ts"),
    ("a2/0.5.0", "003", "new", "experimental-a2", "0.5.0", "package/src/store-redis-core.ts"),
]

def build(seeds_dir, out_dir):
    import glob, hashlib, json
    found = {}
    for d, prefix, side, pkg, ver, src in PLAN:
        seed = glob.glob(os.path.join(seeds_dir, prefix + "_*.txt"))[0]
        found[d] = (seed, side, pkg, ver, src, scripts(sides(seed)[side]))
    rows = []
    for d, (seed, side, pkg, ver, src, scr) in found.items():
        for name, (text, gaps, ln) in scr.items():
            prov = "seed %s, %s side of the diff, constant at line %d of %s" % (
                os.path.basename(seed), side, ln, src)
            if gaps:
                donor_dir = "state/beta30"
                donor = found[donor_dir][5][name][0]
                text = restore(text, donor)
                prov += ("; lines %s of that file are hidden between hunks (the hunk header shows "
                         "the second) and were restored from the identical lines of the same "
                         "constant in %s (seed %s)" % (gaps, donor_dir, os.path.basename(found[donor_dir][0])))
            path = os.path.join(d, name + ".lua")
            full = os.path.join(out_dir, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            rows.append({"file": path, "package": pkg, "version": ver, "constant": name,
                         "sha1": hashlib.sha1(text.encode("utf-8")).hexdigest(),
                         "provenance": prov})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"scripts": rows}, f, indent=2)
        f.write("\n")

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    build(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, SEEDS), sys.argv[2] if len(sys.argv) > 2 else here)
