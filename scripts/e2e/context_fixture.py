#!/usr/bin/env python3
"""Builds the fixture repository of the context comparison.

Usage: context_fixture.py DIR [SPEC]

SPEC defaults to tests/fixtures/context/tree.json. Creates, inside DIR
(which must be empty or absent):
  DIR/work             the repository: the spec's committed files in one
                       commit on branch main, then its dirty files changed
                       and its untracked files written
  DIR/home             a private HOME
  DIR/home/.claude     the user directory (CLAUDE_CONFIG_DIR), with the
                       spec's user files
  DIR/home             also gets the spec's home files
  DIR/managed          the managed-policy directory (FSVIEW_MANAGED_DIR; what
                       Claude Code reads as /etc/claude-code), with the
                       spec's managed files
Git runs without global or system configuration and with fixed names and
dates, so the commit id is the same on every machine. Prints nothing.
Python 3 standard library only.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.join(HERE, "..", "..", "tests", "fixtures", "context", "tree.json")


def git_env(spec):
    c = spec["commit"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": c["user_name"],
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": c["user_name"],
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": c["date"],
        "GIT_COMMITTER_DATE": c["date"],
    })
    return env


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def build(top, spec):
    if os.path.exists(top) and os.listdir(top):
        print(f"context_fixture: {top} is not empty; give a new directory", file=sys.stderr)
        sys.exit(2)
    work = os.path.join(top, "work")
    user = os.path.join(top, "home", ".claude")
    for d in (work, user, os.path.join(top, "managed")):
        os.makedirs(d, exist_ok=True)
    env = git_env(spec)

    def git(*args):
        subprocess.run(["git", *args], cwd=work, env=env, check=True,
                       stdout=subprocess.DEVNULL)

    git("init", "-q", "-b", "main")
    git("config", "user.name", spec["commit"]["user_name"])
    for rel, text in spec["committed"].items():
        write(work, rel, text)
    git("add", "--", *spec["committed"].keys())
    git("commit", "-q", "-m", spec["commit"]["message"])
    for rel in spec["dirty"]:
        with open(os.path.join(work, rel), "a", encoding="utf-8") as f:
            f.write(spec["dirty_append"])
    for rel, text in spec["untracked"].items():
        write(work, rel, text)
    for rel, text in spec["user"].items():
        write(user, rel, text)
    for rel, text in spec.get("home", {}).items():
        write(os.path.join(top, "home"), rel, text)
    for rel, text in spec.get("managed", {}).items():
        write(os.path.join(top, "managed"), rel, text)


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: context_fixture.py DIR [SPEC]", file=sys.stderr)
        sys.exit(2)
    spec_path = sys.argv[2] if len(sys.argv) == 3 else DEFAULT_SPEC
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    build(os.path.abspath(sys.argv[1]), spec)


if __name__ == "__main__":
    main()
