#!/usr/bin/env python3
"""Rebuild the labelled trajectory sets from the public repositories they came from.

The raw trajectories are not in this repository (docs/research/trajectories/README.md), but every
label names its source: `source_repo`, `source_commit` and `source_path`. This script fetches each
named commit and copies each file as the published blob, into the layout the detector's
trajectory test reads (`FAILMEM_TRAJECTORIES`):

    OUT/<set>/labels.jsonl        the set's labels, as committed
    OUT/<set>/raw/<file>          the published file each label names

Usage:
    python3 tools/trajectories/restore.py OUT                        # fetched from GitHub
    python3 tools/trajectories/restore.py OUT --mirrors '/work/.mirror/{owner}+{name}/repo'

By default each repository's named commits are fetched once, without their other files
(`git fetch --filter=blob:none --depth=1 URL COMMIT…`, into OUT/.git-cache/<owner>+<name>);
`--remote` changes the URL template. `--mirrors` reads git directories already on the machine
instead (the layout the search tool's `fetch` leaves). A file already in place is kept. The script exits
with status 1 and names every file it could not restore; it never writes a partial file.

`source_path` is the exact path in the commit, except in a few early labels, which annotate it:
`PATH (branch B)`, `branch B: PATH`, `REF:PATH` (a ref with the commit given) and `PATH (line N)`
(the file is line N of PATH: one history of an OpenHands `output.jsonl`). All four are read here.
A `source_path` that names a directory of OpenHands V0 event files (`events/0.json`, `1.json`, …)
gives those events, in id order, as one JSON array (`json.dumps(events, indent=1,
ensure_ascii=False)`), the form the labeller read.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

LABELS = Path(__file__).resolve().parents[2] / "docs" / "research" / "trajectories"


def source(label: dict) -> tuple[str, int | None]:
    """The path in the commit, and the 1-based line to take (None: the whole file)."""
    path = label["source_path"].strip()
    path = re.sub(r"\s*\(branch [^)]*\)$", "", path)
    path = re.sub(r"^branch [^:]*:\s*", "", path)
    path = re.sub(r"^refs/[^:]*:", "", path)
    line = None
    m = re.fullmatch(r"(.*) \(line (\d+)\)", path)
    if m:
        path, line = m.group(1), int(m.group(2))
    return path, line


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True)


def event_array(git_dir: Path, commit: str, path: str) -> tuple[bytes | None, str | None]:
    """The event files of an OpenHands V0 `events` directory as one JSON array."""
    p = git("ls-tree", "--name-only", f"{commit}:{path}", cwd=git_dir)
    if p.returncode:
        return None, p.stderr.decode(errors="replace").strip()[:300]
    names = p.stdout.decode().split()
    if not names or not all(re.fullmatch(r"\d+\.json", n) for n in names):
        return None, f"{path} is a directory, not of <n>.json event files"
    events = []
    for n in sorted(names, key=lambda n: int(n[: -len(".json")])):
        q = git("cat-file", "-p", f"{commit}:{path}/{n}", cwd=git_dir)
        if q.returncode:
            return None, q.stderr.decode(errors="replace").strip()[:300]
        events.append(json.loads(q.stdout))
    return json.dumps(events, indent=1, ensure_ascii=False).encode(), None


def repository(cache: Path, repo: str, remote: str, commits: set[str]) -> tuple[Path, str | None]:
    """A bare repository holding `commits`, or the reason it could not be made."""
    owner, name = repo.split("/", 1)
    d = cache / f"{owner}+{name}"
    if not d.is_dir():
        if git("init", "-q", "--bare", str(d)).returncode:
            return d, "git init failed"
    missing = sorted(c for c in commits if git("cat-file", "-e", f"{c}^{{commit}}", cwd=d).returncode)
    if missing:
        url = remote.format(owner=owner, name=name, repo=repo)
        p = git("fetch", "-q", "--filter=blob:none", "--depth=1", url, *missing, cwd=d)
        if p.returncode:
            return d, f"git fetch {url}: {p.stderr.decode(errors='replace').strip()[:300]}"
        for c in missing:  # a ref each, so that no `git gc` prunes them
            git("update-ref", f"refs/restore/{c}", c, cwd=d)
    return d, None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the directory of sets to write")
    ap.add_argument("--remote", default="https://github.com/{owner}/{name}",
                    help="URL template of each repository ({owner}, {name}, {repo})")
    ap.add_argument("--mirrors", help="path template of local git directories to read instead")
    ap.add_argument("--sets", nargs="*", help="only these sets (e.g. blind9 corpus)")
    ap.add_argument("--labels", type=Path, default=LABELS,
                    help="the directory of <set>-labels.jsonl files (default: docs/research/trajectories)")
    args = ap.parse_args()

    sets = {}
    for f in sorted(args.labels.glob("*-labels.jsonl")):
        name = f.name[: -len("-labels.jsonl")]
        if not args.sets or name in args.sets:
            sets[name] = [line for line in f.read_text().splitlines(keepends=True) if line.strip()]
    by_repo: dict[str, set[str]] = {}
    for rows in sets.values():
        for row in rows:
            label = json.loads(row)
            by_repo.setdefault(label["source_repo"], set()).add(label["source_commit"])

    cache = args.out / ".git-cache"
    if not args.mirrors:
        cache.mkdir(parents=True, exist_ok=True)
    repos, failed = {}, []
    for repo, commits in sorted(by_repo.items()):
        if args.mirrors:
            owner, name = repo.split("/", 1)
            d = Path(args.mirrors.format(owner=owner, name=name, repo=repo))
            repos[repo] = (d, None if d.is_dir() else f"no git directory at {d}")
        else:
            repos[repo] = repository(cache, repo, args.remote, commits)

    restored = kept = 0
    for name, rows in sets.items():
        set_dir = args.out / name
        (set_dir / "raw").mkdir(parents=True, exist_ok=True)
        (set_dir / "labels.jsonl").write_text("".join(rows))
        for row in rows:
            label = json.loads(row)
            dst = set_dir / "raw" / label["file"]
            if dst.is_file() and dst.stat().st_size > 0:
                kept += 1
                continue
            git_dir, err = repos[label["source_repo"]]
            path, line = source(label)
            data = None
            if err is None:
                spec = f"{label['source_commit']}:{path}"
                if git("cat-file", "-t", spec, cwd=git_dir).stdout.strip() == b"tree":
                    data, err = event_array(git_dir, label["source_commit"], path)
                else:
                    p = git("cat-file", "-p", spec, cwd=git_dir)
                    err = p.stderr.decode(errors="replace").strip()[:300] if p.returncode else None
                    data = p.stdout
            if err is None and line is not None:
                lines = data.splitlines(keepends=True)
                err = None if line <= len(lines) else f"{path} has {len(lines)} lines, not {line}"
            if err is not None:
                failed.append(f"{name}/raw/{label['file']}: {label['source_repo']}: {err}")
                continue
            if line is not None:
                data = data.splitlines(keepends=True)[line - 1]
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(dst.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, dst)
            restored += 1

    total = sum(len(rows) for rows in sets.values())
    print(f"{len(sets)} sets, {total} runs from {len(by_repo)} repositories: "
          f"{restored} restored, {kept} already in place, {len(failed)} not restored")
    for f in failed:
        print(f"  not restored: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
