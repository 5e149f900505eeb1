#!/usr/bin/env python3
"""Rebuilds tests/js/state/<version>/state.ts from a seed diff and the version's fills.txt.

Seeds 000 and 001 show package/src/runtime/state.ts only as a diff. The new side of each hunk
(its context and added lines) is kept verbatim; every run of lines the diff hides between hunks
is filled from fills.txt, where "//@@GAP a-b" names the hidden new-side lines the text after it
fills (README.md says where each fill comes from).

  python3 reconstruct.py SEED_DIFF FILLS > state.ts
  python3 reconstruct.py SEED_DIFF FILLS --manifest   # the ranges and digests for manifest.json
"""
import hashlib
import json
import re
import sys


def new_side(diff_lines):
    """The new side of a one-file diff, a '//@@GAP a-b' line where lines are hidden."""
    out, cur = [], None
    for line in diff_lines:
        m = re.match(r'^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@', line)
        if m:
            start = int(m.group(1))
            expected = 1 if cur is None else cur
            if start > expected:
                out.append('//@@GAP %d-%d' % (expected, start - 1))
            cur = start
            continue
        if cur is None or line.startswith('-'):
            continue
        if line.startswith('+') or line.startswith(' '):
            out.append(line[1:])
            cur += 1
    out.append('//@@GAP %d-end' % cur)
    return out


def fills_of(text):
    fills, cur = {}, None
    for line in text.split('\n'):
        m = re.match(r'^//@@GAP (\S+)$', line)
        if m:
            cur = m.group(1)
            fills[cur] = []
        elif cur is not None:
            fills[cur].append(line)
    return fills


def main():
    diff = open(sys.argv[1], encoding='utf-8').read().split('\n')
    fills = fills_of(open(sys.argv[2], encoding='utf-8').read())
    out, kinds = [], []
    for line in new_side(diff):
        m = re.match(r'^//@@GAP (\S+)$', line)
        if not m:
            out.append(line)
            kinds.append('seed')
            continue
        fill = fills.pop(m.group(1))
        while fill and fill[-1] == '' and m.group(1).endswith('end'):
            fill.pop()
        out += fill
        kinds += [m.group(1)] * len(fill)
    if fills:
        sys.exit('fills for no hidden lines: ' + ', '.join(fills))
    while out and out[-1] == '':
        out.pop()
        kinds.pop()
    text = '\n'.join(out) + '\n'
    if '--manifest' not in sys.argv:
        sys.stdout.write(text)
        return
    seed, filled, i = [], [], 0
    while i < len(kinds):
        j = i
        while j < len(kinds) and kinds[j] == kinds[i]:
            j += 1
        if kinds[i] == 'seed':
            seed.append([i + 1, j])
        else:
            filled.append({'lines': [i + 1, j], 'hidden': kinds[i]})
        i = j
    seed_text = ''.join(out[k - 1] + '\n' for a, b in seed for k in range(a, b + 1))
    print(json.dumps({
        'sha256': hashlib.sha256(text.encode()).hexdigest(),
        'lines': len(out),
        'seed_lines': seed,
        'seed_lines_sha256': hashlib.sha256(seed_text.encode()).hexdigest(),
        'filled': filled,
    }, indent=2))


if __name__ == '__main__':
    main()
