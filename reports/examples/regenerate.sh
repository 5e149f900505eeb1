#!/bin/sh
# Writes the example timeline pages and their screenshots (headless Chromium, Debian
# `chromium`) into reports/examples/. Run from the repository root after `cmake --build build`;
# CTest CiOutputs.TheCommittedExamplePagesAreWhatTheCheckWritesToday holds the same commands.
set -eu
out=reports/examples
for cmd in \
  "--system state --version beta3 --properties cas-versions-linearizable --seed 8676535 --runs 1 --clients 3 --ops 5 --skip 0:0,0:2,1:4,2:2 --faults all" \
  "--system handles --version beta24 --properties busy-means-committing --seed 36 --runs 1 --clients 3 --ops 5 --faults all --skip 0:0,0:3,0:4,0:5,1:0,1:2,1:3,2:0,2:3,2:5" \
  "--system a2 --version 0.5.0 --properties fencing --seed 1 --runs 1 --clients 2 --ops 3 --skip 0:0,0:2"; do
  # shellcheck disable=SC2086
  ./build/testbed check $cmd --quiet --html "$out" > /dev/null || [ $? -eq 1 ]
done
for page in "$out"/*.html; do
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,900 \
    --screenshot="${page%.html}.png" "file://$PWD/$page" 2> /dev/null
done
