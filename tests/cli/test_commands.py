"""CLI conventions: --db and $TAME_WH_DB, --json, --version, doctor, demo, init, error handling."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner

from tests.conftest import snapshot
from warehouse import __version__
from warehouse.cli.main import main
from warehouse.store.schema import code_schema_version


def test_version_flag():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"tame-wh, version {__version__}"


def printed_by_child(code: str, environment: dict[str, str]) -> str:
    """What Python code `code` prints in a child process with `environment`."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_command_line_keeps_blas_to_one_thread_unless_told_otherwise():
    code = "import warehouse.cli, os, numpy; print(os.environ['OPENBLAS_NUM_THREADS'])"
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert printed_by_child(code, environment) == "1"
    assert printed_by_child(code, {**environment, "OPENBLAS_NUM_THREADS": "3"}) == "3"


def test_the_command_line_gives_arrow_the_system_allocator_unless_told_otherwise():
    code = "import warehouse.cli, pyarrow; print(pyarrow.default_memory_pool().backend_name)"
    environment = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    assert printed_by_child(code, environment) == "system"
    pinned = {**environment, "ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}
    assert printed_by_child(code, pinned) == "mimalloc"


def test_init_creates_then_reports_up_to_date(run_cli, new_db_path):
    first = run_cli("init")
    assert first.exit_code == 0 and "created warehouse" in first.output
    second = run_cli("init", "--json")
    assert second.exit_code == 0
    doc = json.loads(second.stdout)
    assert doc == {
        "path": str(new_db_path),
        "schema_version_before": code_schema_version(),
        "schema_version": code_schema_version(),
        "created": False,
        "upgraded": False,
        "catalog_moved": False,
    }


def test_db_defaults_to_environment_variable_then_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TAME_WH_DB", str(tmp_path / "from-env.duckdb"))
    assert CliRunner().invoke(main, ["init"]).exit_code == 0
    assert (tmp_path / "from-env.duckdb").exists()
    monkeypatch.delenv("TAME_WH_DB")
    assert CliRunner().invoke(main, ["init"]).exit_code == 0
    assert (tmp_path / "tame.duckdb").exists()


def test_listing_commands_create_the_warehouse_on_first_use(run_cli, db_path):
    result = run_cli("corpus", "list", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert db_path.exists()


def test_add_list_show_json_round_trip(run_cli, write_lines):
    src = write_lines("s.txt", ["one", "two"])
    tgt = write_lines("t.txt.gz", ["uno", "dos"])
    added = json.loads(
        run_cli(
            "corpus",
            "add",
            "c",
            "--src",
            src,
            "--tgt",
            tgt,
            "--src-lang",
            "en",
            "--tgt-lang",
            "es",
            "--json",
        ).output
    )
    assert added["action"] == "added" and added["corpus"]["n_segments"] == 2
    listed = json.loads(run_cli("corpus", "list", "--json").stdout)
    assert [c["corpus_id"] for c in listed] == [added["corpus"]["corpus_id"]]
    shown = json.loads(run_cli("corpus", "show", "c", "--json").stdout)
    assert shown == listed[0]
    assert shown["meta"]["files"]["tgt"]["path"].endswith("t.txt.gz")


def test_readding_says_nothing_to_do(run_cli, write_lines):
    src = write_lines("s.txt", ["one"])
    ref = write_lines("r.txt", ["uno"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    again = run_cli("testset", "add", "ts", "--src", src, "--ref", ref)
    assert again.exit_code == 0
    assert "already holds identical content" in again.output and "nothing to do" in again.output


def test_replace_says_how_many_dependents_it_removes(run_cli, write_lines, db_path):
    src = write_lines("s.txt", ["one"])
    ref = write_lines("r.txt", ["uno"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    con = duckdb.connect(str(db_path))
    cid = con.execute("SELECT corpus_id FROM corpora").fetchone()[0]
    con.execute(
        "INSERT INTO runs (run_id, test_corpus_id, model_slug, created_at, ingested_at, "
        "n_entries, run_card) VALUES ('r1', ?, 'm', now(), now(), 1, '{}')",
        [cid],
    )
    con.close()
    new_ref = write_lines("r2.txt", ["una"])
    result = run_cli("testset", "add", "ts", "--src", src, "--ref", new_ref, "--replace", "--yes")
    assert result.exit_code == 0
    assert "removing 0 dependent audit(s) and 1 run(s)" in result.stderr
    assert "replaced test set 'ts'" in result.stdout


def test_replace_describes_what_it_removes_and_needs_yes(run_cli, write_lines, db_path):
    src = write_lines("s.txt", ["one", "two"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", src).exit_code == 0
    hyp = write_lines("h.txt", ["one", "zwei"])
    ingested = run_cli(
        "ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m", "--no-intervals"
    )
    assert ingested.exit_code == 0
    before = snapshot(db_path)
    new_ref = write_lines("r2.txt", ["uno", "dos"])
    refused = run_cli("testset", "add", "ts", "--src", src, "--ref", new_ref, "--replace")
    assert refused.exit_code == 2 and "pass --yes" in refused.stderr
    assert "removes test set 'ts'" in refused.stderr and "0 audit(s) and 1 run(s)" in refused.stderr
    assert snapshot(db_path) == before
    done = run_cli("testset", "add", "ts", "--src", src, "--ref", new_ref, "--replace", "--yes")
    assert done.exit_code == 0 and "replaced test set 'ts'" in done.stdout


def test_testset_list_table(run_cli, write_lines):
    src = write_lines("s.txt", ["one"])
    ref = write_lines("r.txt", ["uno"])
    run_cli("testset", "add", "my-test", "--src", src, "--ref", ref)
    out = run_cli("testset", "list").output
    assert "my-test" in out and "segments" in out


def search_kernel_for_this_cpu() -> str:
    """The exact search's kernel this CPU's flags call for (read from /proc/cpuinfo on x86-64
    Linux; the portable one elsewhere)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "portable"
    flags: set[str] = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if {"avx512f", "avx512bw"} <= flags:
        return "avx512"
    return "avx2" if "avx2" in flags else "portable"


def test_doctor_reports_versions_and_schema(run_cli, new_db_path, monkeypatch):
    monkeypatch.setenv("TAME_WH_DUCKDB_THREADS", "2")
    before = json.loads(run_cli("doctor", "--json").stdout)
    assert before["warehouse"]["exists"] is False and not new_db_path.exists()
    run_cli("init")
    report = json.loads(run_cli("doctor", "--json").stdout)
    assert report["ok"] is True
    assert report["tame_wh"] == __version__
    assert report["native"] == {
        "loads": True,
        "version": __version__,
        "search_kernel": search_kernel_for_this_cpu(),
        "error": None,
    }
    assert report["duckdb"] == duckdb.__version__
    assert report["sacrebleu"].startswith("2.6")
    assert report["cpu_threads"] >= 1
    assert report["duckdb_threads"] == 2
    assert report["warehouse"]["schema_version"] == code_schema_version()
    text = run_cli("doctor").output
    assert "native module" in text and "(loads)" in text
    assert f"search kernel {search_kernel_for_this_cpu()}" in " ".join(text.split())
    assert "duckdb threads 2 ($TAME_WH_DUCKDB_THREADS)" in " ".join(text.split())


def test_doctor_exits_3_when_the_warehouse_is_unusable(run_cli, db_path):
    db_path.write_text("not a database")
    result = run_cli("doctor", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["warehouse"]["error"]


def test_demo_loads_example_and_is_idempotent(run_cli, new_db_path):
    first = run_cli("demo")
    assert first.exit_code == 0, first.output
    assert "created warehouse" in first.output and "(added)" in first.output
    second = json.loads(run_cli("demo", "--json").stdout)
    assert [s["action"] for s in second["corpora"]] == ["unchanged", "unchanged"]
    assert [r["action"] for r in second["runs"]] == ["unchanged"] * 3
    con = duckdb.connect(str(new_db_path), read_only=True)
    counts = con.execute("SELECT name, role, n_segments FROM corpora ORDER BY name").fetchall()
    assert counts == [("demo-test", "test", 40), ("demo-train", "train", 251)]
    assert con.execute(
        "SELECT count(DISTINCT difficulty) FROM segments WHERE difficulty IS NOT NULL"
    ).fetchone() == (5,)
    runs = con.execute("SELECT model_slug, condition FROM runs ORDER BY created_at").fetchall()
    assert runs == [
        ("demo-large", "zero-shot"),
        ("demo-small", "zero-shot"),
        ("demo-small", "few-shot"),
    ]


def test_internal_errors_are_one_line_unless_debug(run_cli, db_path, monkeypatch):
    def boom(*_args, **_kwargs):
        raise ValueError("unexpected\nsecond line")

    monkeypatch.setattr("warehouse.store.corpora.list_corpora", boom)
    result = run_cli("corpus", "list")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "internal error: ValueError: unexpected (rerun with --debug for details)"
    )
    debug = CliRunner().invoke(main, ["--db", str(db_path), "--debug", "corpus", "list"])
    assert debug.exit_code == 1
    assert "Traceback" in debug.stderr and "second line" in debug.stderr


def test_lock_held_by_another_process_times_out_with_a_clear_error(run_cli, db_path):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
            "print('ready', flush=True); "
            "time.sleep(30)",
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        result = CliRunner().invoke(
            main, ["--db", str(db_path), "--lock-timeout", "0.3", "corpus", "list"]
        )
        assert result.exit_code == 2
        assert "locked by another process" in result.stderr
        assert "--lock-timeout" in result.stderr
    finally:
        holder.kill()
        holder.wait()
