"""Hostile and broken input against the CLI: each case runs `tame-wh` in a child process on a copy
of the demo warehouse and prints one row — input, command, exit code, seconds, whether the
warehouse is byte-for-byte as it was, and the first line of the error. Every case must end in
seconds with its documented exit code (2 for bad input, 5 for a failure after a commit, 130 for
an interrupt) and never with an internal error (1), a signal or a hang (the child is stopped
after 60 s and the row says `HANG`); no output may carry the canary secret key the environment
holds. The classes: oversized and endless input, special files, out-of-range options, SQL that
asks for the configuration or the secrets, metric plugins that exit, hang, leak or interrupt,
gates whose needs fail before or after the commit, repeated or control-character judgments, a
training row too long for the audit's memory, and a query result too large to hold.

    python bench/hostile_inputs.py [--keep DIR]

Exit status 1 when any row fails those rules.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


# A secret key every case runs with: no output may show it.
CANARY = "hostile-canary-secret-4f2a9c"
PLUGINS = ROOT / "tests" / "metrics" / "plugin_hostile"


def _tame(
    work: Path, db: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int | str, float, str, bool]:
    """Run `tame-wh --db DB ARGS…`: exit code (or HANG), seconds, first error line, and whether
    the canary secret appeared anywhere in the output."""
    started = time.monotonic()
    path = os.pathsep.join([str(ROOT), str(PLUGINS)])
    try:
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args],
            cwd=work,
            env={**os.environ, "PYTHONPATH": path, "AWS_SECRET_ACCESS_KEY": CANARY, **(env or {})},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return "HANG", time.monotonic() - started, "", False
    lines = [line for line in done.stderr.splitlines() if "error" in line or "warning" in line]
    leaked = CANARY in done.stdout + done.stderr
    return done.returncode, time.monotonic() - started, (lines[0] if lines else "")[:110], leaked


def _digest(path: Path) -> str:
    """The warehouse file's content hash (absent: the empty string)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _bomb(path: Path, gib: int = 2) -> Path:
    """A few MiB of gzip that decompress to `gib` GiB of newlines."""
    block = b"\n" * 2**24
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for _ in range(gib * 64):
            handle.write(block)
    return path


# Forms of SQL that would show a setting, a secret, a variable or the environment.
SECRET_FORMS = (
    "SELECT current_setting('s3_secret_access_key')",
    "SELECT ('allowed_paths').current_setting()",
    "SELECT list_transform(['s3_access_key_id'], x -> current_setting(x))",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT getenv('AWS_SECRET_ACCESS_KEY')",
    "SELECT getvariable('tame_lake_catalog_schema')",
    "SELECT * FROM pg_catalog.pg_settings",
    "SELECT * FROM information_schema.duckdb_settings",
    "SUMMARIZE SELECT current_setting('allowed_paths') AS p",
    "WITH RECURSIVE t AS (SELECT 1 AS a UNION BY NAME SELECT * FROM 'x.csv') FROM t",
    "PRAGMA database_list",
)


def _expected(what: str) -> int:
    """The exit code a case must end with."""
    if "corrupted" in what or "FIFO in place" in what:
        return 0
    if "full disk" in what:
        return 5
    if "interrupting" in what:
        return 130
    return 2


def _sql(db: Path, statement: str) -> None:
    """Run one statement on a warehouse file (the bench's own set-up)."""
    import duckdb

    con = duckdb.connect(str(db))
    try:
        con.execute(statement)
    finally:
        con.close()


def _mqm_files(work: Path) -> tuple[Path, Path]:
    """Two small MQM files: one repeating an error line, one with an ESC in a rater."""
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
    lines = [header]
    for seg, (src, ref, hyp) in enumerate(
        [("Hallo Welt", "Hello world", "Hello word"), ("Guten Tag", "Good day", "Good morning")],
        start=1,
    ):
        lines.append(f"ref\td\t1\t{seg}\tr1\t{src}\t{ref}\tNo-error\tNo-error")
        lines.append(f"A\td\t1\t{seg}\tr1\t{src}\t<v>{hyp}</v>\tAccuracy\tMajor")
    repeated = work / "repeated.tsv"
    repeated.write_text("\n".join([*lines, lines[2]]) + "\n", encoding="utf-8")
    control = work / "control.tsv"
    control.write_text("\n".join(lines).replace("\tr1\t", "\tr\x1b[2J1\t", 1) + "\n",
                       encoding="utf-8")  # fmt: skip
    return repeated, control


def main() -> int:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="Work in DIR and keep it.")
    options = parser.parse_args()
    work = options.keep or Path(tempfile.mkdtemp(prefix="tame-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    demo = work / "demo.duckdb"
    subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "--db", str(demo), "-q", "demo"],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
    )
    examples = ROOT / "warehouse" / "examples"
    bomb = _bomb(work / "bomb.gz")
    fifo = work / "fifo.duckdb"
    os.mkfifo(fifo)
    long_line = work / "long.txt"
    long_line.write_text("x" * 1_200_000 + "\n", encoding="utf-8")
    # A stored index replaced by a FIFO, and one corrupted.
    index_dir = Path(f"{demo}.indexes")
    [index_file] = sorted(index_dir.glob("*.index"))
    fifo_db = work / "fifo-index.duckdb"
    shutil.copy(demo, fifo_db)
    shutil.copytree(index_dir, Path(f"{fifo_db}.indexes"))
    fifo_index = Path(f"{fifo_db}.indexes") / index_file.name
    fifo_index.unlink()
    os.mkfifo(fifo_index)
    bad_db = work / "corrupt-index.duckdb"
    shutil.copy(demo, bad_db)
    shutil.copytree(index_dir, Path(f"{bad_db}.indexes"))
    damaged = Path(f"{bad_db}.indexes") / index_file.name
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    src = str(examples / "test.en")
    huge = "1" + "0" * 30 + "TB"
    cases: list[tuple[str, Path, list[str]]] = [
        ("gzip bomb (2 GiB of newlines)", demo, ["ingest", "--testset", "demo-test", "--hyp",
                                                str(bomb), "--model-slug", "x"]),
        ("gzip bomb (2 GiB of newlines)", demo, ["corpus", "add", "b", "--src", str(bomb),
                                                "--tgt", str(bomb)]),
        ("gzip bomb (2 GiB of newlines)", demo, ["testset", "add", "b", "--src", str(bomb),
                                                "--ref", str(bomb)]),
        ("a line of 1.2 M characters", demo, ["testset", "add", "l", "--src", str(long_line),
                                             "--ref", str(long_line)]),
        (f"--memory-limit {huge}", demo, ["audit", "--train", "demo-train", "--testset",
                                          "demo-test", "--force", "--memory-limit", huge]),
        (f"--memory-limit {huge}", demo, ["query", "SELECT 1", "--memory-limit", huge]),
        ("--as-of 9999-12-31T23:59:59.999999-23:59", demo,
         ["leaderboard", "--as-of", "9999-12-31T23:59:59.999999-23:59"]),
        ("--lock-timeout nan", demo, ["--lock-timeout", "nan", "leaderboard"]),
        ("--db is a FIFO", fifo, ["ingest", "--testset", "demo-test", "--hyp", src]),
        ("--db is a FIFO", fifo, ["leaderboard"]),
        ("a FIFO in place of a stored index", fifo_db, ["audit", "--train", "demo-train",
                                                        "--testset", "demo-test", "--force"]),
        ("a corrupted stored index", bad_db, ["index", "list"]),
    ]  # fmt: skip
    # Special files, out-of-range integers, a result too large to hold.
    cases += [
        ("copy --from a FIFO", demo, ["copy", "--from", str(fifo), "--to", str(work / "o.db")]),
        ("copy --to a FIFO", demo, ["copy", "--from", str(demo), "--to", str(fifo)]),
        ("copy --to a device", demo, ["copy", "--from", str(demo), "--to", "/dev/null"]),
        ("--seed 2^64", demo, ["compare", "demo-large", "demo-small/zero-shot", "--significance",
                               "--seed", str(2**64)]),
        ("--limit 2^64", demo, ["leaderboard", "--limit", str(2**64)]),
        ("--shortlist 2^40", demo, ["audit", "--train", "demo-train", "--testset", "demo-test",
                                    "--mode", "fast", "--shortlist", str(2**40)]),
        ("10^8 rows through query", demo, ["query", "SELECT * FROM range(100000000)"]),
    ]  # fmt: skip
    # SQL that asks for the configuration or the secrets.
    for sql in SECRET_FORMS:
        cases.append((f"query: {sql}", demo, ["query", sql, "--json"]))
    # Metric plugins that misbehave (tests/metrics/plugin_hostile); one that never returns runs
    # under a 3-second timeout setting.
    slow_db = work / "slow-plugins.duckdb"
    shutil.copy(demo, slow_db)
    _sql(slow_db, "UPDATE settings SET value = 3 WHERE key = 'plugin.timeout_seconds'")
    hyp = str(examples / "demo-large.zero-shot.hyp")
    for metric, db in (
        ("exiting_metric", demo),
        ("exiting_loader", demo),
        ("leaky_metric", demo),
        ("interrupting_metric", demo),
        ("hanging_metric", slow_db),
    ):
        cases.append(
            (
                f"plugin {metric}",
                db,
                [
                    "ingest",
                    "--testset",
                    "demo-test",
                    "--hyp",
                    hyp,
                    "--model-slug",
                    f"p-{metric}",
                    "--metric",
                    metric,
                ],
            )
        )
    # The gate: what it needs, before the commit (2) and after it (5).
    report = str(examples / "demo-small.few-shot.report.json")
    after_db = work / "after-commit.duckdb"
    shutil.copy(demo, after_db)
    cases += [
        ("--gate --against nosuchrun", demo, ["ingest", report, "--gate", "--against", "nosuch"]),
        ("--gate-markdown in no directory", demo, ["ingest", report, "--gate", "--gate-markdown",
                                                   str(work / "no" / "dir" / "gate.md")]),
        ("--gate-markdown to a full disk", after_db, ["ingest", "--testset", "demo-test",
                                                      "--hyp", hyp, "--model-slug", "g",
                                                      "--gate", "--gate-markdown", "/dev/full"]),
    ]  # fmt: skip
    # Judgments: a repeated error line (--strict), a control character in the rater.
    repeated, control = _mqm_files(work)
    cases += [
        ("MQM: a repeated error line, --strict", demo, ["ingest", "--mqm", str(repeated),
                                                        "--reference-system", "ref",
                                                        "--testset", "m", "--strict"]),
        ("MQM: an ESC in a rater", demo, ["ingest", "--mqm", str(control), "--reference-system",
                                          "ref", "--testset", "m"]),
    ]  # fmt: skip
    # A training row too long for the audit's memory (a 2-million-character document).
    long_db = work / "long-row.duckdb"
    shutil.copy(demo, long_db)
    document = work / "document.txt"
    document.write_text("un document très long " * 95_000 + "\n", encoding="utf-8")
    roomy = {"TAME_WH_MAX_LINE_CHARS": "3000000"}
    _tame(work, long_db, "-q", "corpus", "add", "web", "--text", str(document), "--lang", "es",
          env=roomy)  # fmt: skip
    for measure in ("jaccard", "minhash"):
        cases.append((f"a 2 M-character row, {measure} in 256 MiB", long_db,
                      ["audit", "--train", "web", "--testset", "demo-test", "--side", "target",
                       "--measure", measure, "--memory-limit", "256MiB"]))  # fmt: skip
    print("| input | command | exit | seconds | warehouse unchanged | first line |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = 0
    for what, db, args in cases:
        before = _digest(db) if db.is_file() else ""
        env = roomy if "M-character row" in what else None
        code, seconds, line, leaked = _tame(work, db, *args, env=env)
        after = _digest(db) if db.is_file() else ""
        # A FIFO index is replaced (an audit with --force rewrites the warehouse: exit 0 is the
        # expected outcome there); a gate whose Markdown fails after the commit has stored its
        # run (exit 5); every other case must leave the warehouse as it was.
        rewrites = "FIFO in place" in what or "full disk" in what
        unchanged = "n/a (rewrites)" if rewrites else ("yes" if before == after else "NO")
        command = " ".join(a for a in args if "/" not in a)[:60]
        expected = _expected(what)
        ok = code == expected and (rewrites or before == after) and seconds < 30 and not leaked
        failed += not ok
        print(
            f"| {what.replace('|', '/')} | `{command.replace('|', '/')}` | {code} | "
            f"{seconds:.1f} | {unchanged} | {line.replace('|', '/')} |"
            + ("" if ok else " **FAIL**" + (" (the canary secret was printed)" if leaked else ""))
        )
    listed = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "--db", str(bad_db), "index", "list"],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    ).stdout
    if "corrupted" not in listed:
        print("index list did not call the corrupted index corrupted **FAIL**")
        failed += 1
    if options.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{len(cases) - min(failed, len(cases))} of {len(cases)} cases held")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
