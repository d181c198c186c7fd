"""restore.py on real git repositories made here: the published bytes, the annotated paths of the
early labels, a fetch of only the named commits, and a missing file named, not half-written."""
import json
import subprocess
import sys
from pathlib import Path

RESTORE = Path(__file__).with_name("restore.py")
SESSION = b'{"type":"user"}\n{"type":"assistant"}\n'
HISTORIES = b'{"instance_id":"a"}\n{"instance_id":"b"}\n{"instance_id":"c"}\n'


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def published(tmp: Path):
    """A repository `acme/runs` with a session on main and histories on a side branch; the
    commits of both."""
    repo = tmp / "acme+runs"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "sessions").mkdir()
    (repo / "sessions" / "s1.jsonl").write_bytes(SESSION)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "session")
    main = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "checkpoints")
    (repo / "output.jsonl").write_bytes(HISTORIES)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "histories")
    side = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return repo, main, side


def labels(tmp: Path, main: str, side: str, extra=()):
    rows = [
        {"file": "claude-code/s1.jsonl", "source_path": "sessions/s1.jsonl", "source_commit": main},
        {"file": "openhands/b.jsonl", "source_path": "output.jsonl (line 2)", "source_commit": side},
        {"file": "openhands/all.jsonl", "source_path": "output.jsonl (branch checkpoints)",
         "source_commit": side},
        {"file": "openhands/all2.jsonl", "source_path": "branch checkpoints: output.jsonl",
         "source_commit": side},
        *extra,
    ]
    d = tmp / "labels"
    d.mkdir()
    text = "".join(json.dumps({"source_repo": "acme/runs", "stuck": False, **r}) + "\n" for r in rows)
    (d / "set1-labels.jsonl").write_text(text)
    return d, text


def restore(*args):
    return subprocess.run([sys.executable, str(RESTORE), *map(str, args)], capture_output=True,
                          text=True)


def check_restored(out: Path, text: str):
    s = out / "set1"
    assert (s / "labels.jsonl").read_text() == text
    assert (s / "raw/claude-code/s1.jsonl").read_bytes() == SESSION
    assert (s / "raw/openhands/b.jsonl").read_bytes() == b'{"instance_id":"b"}\n'
    assert (s / "raw/openhands/all.jsonl").read_bytes() == HISTORIES
    assert (s / "raw/openhands/all2.jsonl").read_bytes() == HISTORIES


def test_reads_local_git_directories_and_names_what_it_cannot_restore(tmp_path):
    repo, main, side = published(tmp_path)
    missing = {"file": "codex/gone.jsonl", "source_path": "sessions/gone.jsonl", "source_commit": main}
    d, text = labels(tmp_path, main, side, [missing])
    out = tmp_path / "out"
    p = restore(out, "--labels", d, "--mirrors", str(tmp_path / "{owner}+{name}" / ".git"))
    assert p.returncode == 1, p.stderr
    assert "4 restored, 0 already in place, 1 not restored" in p.stdout
    assert "set1/raw/codex/gone.jsonl: acme/runs:" in p.stderr
    check_restored(out, text)
    assert not list(out.rglob("*.part")) and not (out / "set1/raw/codex/gone.jsonl").exists()
    # A second run keeps what is in place.
    p = restore(out, "--labels", d, "--mirrors", str(tmp_path / "{owner}+{name}" / ".git"))
    assert "0 restored, 4 already in place, 1 not restored" in p.stdout


def test_fetches_only_the_named_commits_from_a_remote(tmp_path):
    repo, main, side = published(tmp_path)
    # A server that allows partial fetches by commit id, as GitHub does.
    server = tmp_path / "server" / "acme" / "runs.git"
    server.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(server))
    git(server, "update-ref", "refs/heads/checkpoints", side)
    git(server, "config", "uploadpack.allowFilter", "true")
    git(server, "config", "uploadpack.allowAnySHA1InWant", "true")
    d, text = labels(tmp_path, main, side)
    out = tmp_path / "out"
    p = restore(out, "--labels", d, "--remote", f"file://{tmp_path}/server/{{owner}}/{{name}}.git")
    assert p.returncode == 0, p.stderr
    assert "4 restored" in p.stdout
    check_restored(out, text)
    # Shallow: the cache holds the two named commits and not their parents' history.
    cache = out / ".git-cache" / "acme+runs"
    assert git(cache, "rev-list", "--all", "--count") == "2"


def test_an_unreachable_remote_fails_every_file_of_it(tmp_path):
    _, main, side = published(tmp_path)
    d, _ = labels(tmp_path, main, side)
    p = restore(tmp_path / "out", "--labels", d, "--remote", f"file://{tmp_path}/nowhere/{{name}}")
    assert p.returncode == 1
    assert p.stderr.count("not restored: set1/raw/") == 4
    assert "git fetch file://" in p.stderr


def test_an_events_directory_becomes_one_array_in_id_order(tmp_path):
    repo = tmp_path / "acme+runs"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    events = repo / "sessions" / "s1" / "events"
    events.mkdir(parents=True)
    # Ids past 9 sort after 2 by number, not by name; text stays as written (no \\u escapes).
    for i in (0, 1, 2, 10):
        (events / f"{i}.json").write_text(json.dumps({"id": i, "message": "é"}), encoding="utf-8")
    (repo / "sessions" / "s1" / "notes").mkdir()
    (repo / "sessions" / "s1" / "notes" / "a.txt").write_text("x")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "events")
    c = git(repo, "rev-parse", "HEAD")
    rows = [
        {"file": "openhands/s1.json", "source_path": "sessions/s1/events", "source_commit": c},
        {"file": "openhands/bad.json", "source_path": "sessions/s1/notes", "source_commit": c},
    ]
    d = tmp_path / "labels"
    d.mkdir()
    (d / "set1-labels.jsonl").write_text(
        "".join(json.dumps({"source_repo": "acme/runs", "stuck": False, **r}) + "\n" for r in rows))
    out = tmp_path / "out"
    p = restore(out, "--labels", d, "--mirrors", str(tmp_path / "{owner}+{name}" / ".git"))
    assert p.returncode == 1
    want = [{"id": i, "message": "é"} for i in (0, 1, 2, 10)]
    got = (out / "set1/raw/openhands/s1.json").read_bytes()
    assert got == json.dumps(want, indent=1, ensure_ascii=False).encode()
    assert "sessions/s1/notes is a directory, not of <n>.json event files" in p.stderr
    assert not (out / "set1/raw/openhands/bad.json").exists()
