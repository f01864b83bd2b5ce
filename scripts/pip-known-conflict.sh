#!/usr/bin/env bash
# Runs a pip command (its arguments) that is expected to leave one known dependency conflict:
# .venv-pl19 keeps setuptools<70 on purpose (pytorch-lightning 1.9.5 imports pkg_resources,
# which setuptools 70 dropped), while torch's metadata asks for a newer setuptools. pip then
# reports, although the install succeeded:
#   ERROR: pip's dependency resolver does not currently take into account all the packages ...
#   torch 2.13.0+cpu requires setuptools>=77.0.3, but you have setuptools 69.5.1 which is incompatible.
# When that report is all pip printed and it succeeded, one line saying so replaces it.
# Otherwise everything pip printed is shown as it came, and pip's exit status is this
# script's: a real failure still fails the setup.
set -uo pipefail
status=0
out=$("$@" 2>&1) || status=$?
header="ERROR: pip's dependency resolver does not currently take into account all the packages that are installed."
conflict='^[A-Za-z0-9_.-]+ [^ ]+ requires setuptools[^,]*, but you have setuptools [^ ]+ which is incompatible\.$'
rest=$(printf '%s\n' "$out" | grep -v -F -e "$header" | grep -v -E -e "$conflict" | grep -v -e '^$' || true)
if [ "$status" -eq 0 ] && [ -z "$rest" ] && printf '%s\n' "$out" | grep -q -F -e "$header"; then
    echo "(setuptools<70 kept on purpose for pytorch-lightning 1.9.5, which needs pkg_resources; pip's report that torch wants a newer one is expected)"
    exit 0
fi
# pip failed, said something else, or nothing of the known conflict: all of it, as it came
if [ -n "$out" ]; then
    printf '%s\n' "$out" >&2
fi
exit "$status"
