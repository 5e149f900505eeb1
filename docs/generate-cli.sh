#!/usr/bin/env bash
# Writes docs/cli.md, the command reference, from the CLI's own --help: `bash docs/generate-cli.sh
# build/testbed > docs/cli.md`. CTest (CliReference.DocsCliMdIsTheHelpOfEveryCommand) runs it and
# fails when the committed page differs.
set -euo pipefail
testbed=${1:?usage: generate-cli.sh PATH_TO_TESTBED}
echo "# Command reference"
echo
echo "Generated from \`testbed --help\` and each \`testbed COMMAND --help\` by"
echo "\`docs/generate-cli.sh\`; do not edit by hand. What each command is for, with examples, is in"
echo "the [README](../README.md) and [usage.md](usage.md)."
echo
echo '```'
"$testbed" --help
echo '```'
# The subcommands, as --help lists them (two-space indented names under "Subcommands:").
"$testbed" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' |
  while read -r command; do
    echo
    echo "## testbed $command"
    echo
    echo '```'
    "$testbed" "$command" --help
    echo '```'
  done
