#!/usr/bin/env bash
# Fails naming each line of a tracked file that points into the "shared" folder next to the
# repository (its design notes, style guide, seeds or reference notes): users of kiln don't have
# it. Cite the public source by its title instead ("Effective PyTorch", PyTorch's "Automatic Mixed
# Precision examples", WebDataset's format notes, a PyTorch docs page's title, a GCC manual page).
# With no arguments it checks every tracked text file (git ls-files); with arguments, those files.
# The patterns are written so that this script does not match itself.
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='[.][.]/shared\b|/work/shar[e]d\b|\bshared/(seeds|reference|sketches|hooks)\b'
pattern+='|\b(DESIGN|STYLE)[.]md\b|\btoolchain[- ]notes\b|\bprior-art[.]md\b'
if [ $# -gt 0 ]; then
  hits="$(grep -n -I -E "$pattern" -- "$@" /dev/null || true)"
else
  hits="$(git grep -n -I -E "$pattern" || true)"
fi
if [ -n "$hits" ]; then
  echo "check_no_shared: these lines point outside the repository, to notes users don't have;"
  echo "cite the public source by its title instead:"
  echo "$hits" | sed 's/^/  /'
  exit 1
fi
echo "check_no_shared: no tracked file points outside the repository"
