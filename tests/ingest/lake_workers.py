"""Child processes of the lake concurrency tests (`python -m tests.ingest.lake_workers KIND …`):
writers that ingest many runs one command at a time, an auditor, and readers that loop over
`leaderboard` and `query` and record anything inconsistent they see. The warehouse comes from
$TAME_WH_DB / $TAME_WH_DATA_PATH."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from warehouse.cli.main import main

# Every run with fewer stored rows than entries, as a reader sees it in one snapshot.
PARTIAL_RUNS = """
SELECT r.run_id, r.n_entries,
       (SELECT count(*) FROM hypotheses h WHERE h.run_id = r.run_id) AS n_hyp,
       (SELECT count(*) FROM segment_stats s WHERE s.run_id = r.run_id) AS n_stats,
       (SELECT count(*) FROM run_sums s WHERE s.run_id = r.run_id) AS n_sums
FROM runs r
WHERE n_hyp <> r.n_entries OR n_stats <> r.n_entries OR n_sums <> 1
"""


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


# Readers poll like a dashboard, and the auditor pauses as long between audits: a leaderboard on
# a lake cost about a second of CPU (most of it planning the views), so polling every 2 s the two
# readers and the auditor took over half of a two-core machine from the writers; every 5 s they
# still see the lake dozens of times while the 400 runs arrive.
POLL_SECONDS = 5.0


def ingest(out: Path, testset: str, hyps: list[str]) -> None:
    """Ingest each hypothesis file as its own run; one JSON line per command."""
    with out.open("w", encoding="utf-8") as log:
        for path in hyps:
            slug = Path(path).stem
            code, text = _invoke(
                "ingest",
                "--testset",
                testset,
                "--hyp",
                path,
                "--model-slug",
                slug,
                "--no-intervals",
            )
            log.write(json.dumps({"hyp": path, "code": code, "output": text}) + "\n")
            log.flush()


def audit(out: Path, train: str, testset: str, stop: Path) -> None:
    """Recompute the audit until `stop` exists, pausing between audits as readers poll."""
    with out.open("w", encoding="utf-8") as log:
        while not stop.exists():
            code, text = _invoke("audit", "--train", train, "--testset", testset, "--force")
            log.write(json.dumps({"code": code, "output": text[-400:]}) + "\n")
            log.flush()
            time.sleep(POLL_SECONDS)


def read(out: Path, stop: Path, writing: Path | None = None) -> None:
    """Poll the leaderboard and a query until `stop` exists; log every partial run seen, and
    whether `writing` (when given) existed as the read began."""
    with out.open("w", encoding="utf-8") as log:
        while not stop.exists():
            during = writing.exists() if writing is not None else None
            code, text = _invoke("leaderboard", "--json")
            if code != 0:
                log.write(json.dumps({"what": "leaderboard", "code": code, "output": text}) + "\n")
            code, text = _invoke("query", PARTIAL_RUNS, "--json")
            partial = json.loads(text) if code == 0 else None
            record = {"what": "query", "code": code, "partial": partial, "writing": during}
            log.write(json.dumps(record) + "\n")
            log.flush()
            time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    kind, out, *rest = sys.argv[1:]
    if kind == "ingest":
        ingest(Path(out), rest[0], rest[1:])
    elif kind == "audit":
        audit(Path(out), rest[0], rest[1], Path(rest[2]))
    elif kind == "read":
        read(Path(out), Path(rest[0]), Path(rest[1]) if len(rest) > 1 else None)
    else:
        raise SystemExit(f"unknown worker {kind}")
