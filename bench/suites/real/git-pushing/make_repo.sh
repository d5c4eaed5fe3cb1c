#!/bin/sh
# Per-cell setup of the git-pushing suite: the cell's work folder becomes a repository on branch `main` whose
# `origin` is a bare repository inside it (.remote.git, excluded from the work tree), with one pushed commit and
# an uncommitted change to notes.md. Nothing leaves the cell: the push goes to .remote.git.
set -eu
mkdir -p .home
git init -q -b main .
printf '.home/\n.remote.git/\n' > .git/info/exclude
git config user.name bench && git config user.email bench@example.invalid
echo "# notes" > notes.md && git add notes.md && git commit -qm "initial"
git init -q --bare .remote.git
git remote add origin "$PWD/.remote.git"
git push -q -u origin main
echo "- pushing works offline" >> notes.md
