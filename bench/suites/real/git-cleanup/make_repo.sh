#!/bin/sh
# Per-cell setup of the git-cleanup suite: a repository in the cell's work folder with a default branch `main`,
# a branch merged into it (feature/done), a branch with work of its own (feature/wip), and a linked worktree of
# another merged branch (fix/old, at .worktrees/old). Made in every cell, since a worktree does not survive a copy.
set -eu
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench \
    GIT_COMMITTER_EMAIL=bench@example.invalid GIT_CONFIG_NOSYSTEM=1 HOME="$PWD/.home"
mkdir -p .home
git init -q -b main .
printf '.home/\n.worktrees/\n' > .git/info/exclude
echo "v1" > app.txt && git add app.txt && git commit -qm "initial"
git checkout -qb feature/done && echo "done" > done.txt && git add done.txt && git commit -qm "feature done"
git checkout -q main && git merge -q --no-ff feature/done -m "Merge feature/done (#12)"
git checkout -qb fix/old && echo "old fix" > old.txt && git add old.txt && git commit -qm "old fix"
git checkout -q main && git merge -q --no-ff fix/old -m "Merge fix/old (#13)"
git checkout -qb feature/wip && echo "wip" > wip.txt && git add wip.txt && git commit -qm "work in progress"
git checkout -q main
git worktree add -q .worktrees/old fix/old
