"""Other tools' outputs ingested (`ingest --from …`, `testset add --from …`): tables with their
own column names, COMET's JSON, lm-evaluation-harness sample logs. Their runs have the scores
of the same hypotheses ingested as plain files; what they carry besides (per-segment scores,
the COMET model, the harness's model and shots) is kept; bad files are refused with file and
line, the warehouse unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.backends import TEMPLATES
from tests.conftest import snapshot

DATA = Path(__file__).parents[1] / "inputs" / "data"
LM_EVAL = DATA / "lm-eval" / "my-org__tiny-mt"
SAMPLES = LM_EVAL / "samples_wmt16-de-en_2025-01-02T10-11-12.123456.jsonl"
RESULTS = LM_EVAL / "results_2025-01-02T10-11-12.123456.json"
COMET_MODEL = "Unbabel/wmt22-comet-da"


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def plain(run_cli, db_path):
    """A test set from plain files and both systems ingested from plain files: their scores (a
    copy of the warehouse, made once)."""

    def make(path):
        _json(run_cli("testset", "add", "wmt", "--src", DATA / "src.de", "--ref", DATA / "ref.en",
                      "--json", db=path))  # fmt: skip
        scores = {}
        for system in ("sysA", "sysB"):
            [run] = _json(run_cli("ingest", "--testset", "wmt", "--hyp", DATA / f"{system}.en",
                                  "--model-slug", f"plain-{system}", "--no-intervals", "--json",
                                  db=path))  # fmt: skip
            scores[system] = run["scores"]
        (path.parent / "scores.json").write_text(json.dumps(scores), encoding="utf-8")

    folder = TEMPLATES.copy_built("imports-plain", make, db_path)
    return json.loads((folder / "scores.json").read_text(encoding="utf-8"))


def test_a_test_set_from_a_dataset_file_is_the_test_set_of_the_same_plain_files(run_cli):
    from_table = _json(run_cli("testset", "add", "hf", "--from", DATA / "wmt16-de-en.jsonl",
                               "--src-col", "translation.de", "--ref-col", "translation.en",
                               "--json"))  # fmt: skip
    again = _json(run_cli("testset", "add", "hf", "--src", DATA / "src.de", "--ref",
                          DATA / "ref.en", "--json"))  # fmt: skip
    assert again["action"] == "unchanged"
    assert again["corpus"]["corpus_id"] == from_table["corpus"]["corpus_id"]


def test_tables_of_outputs_score_as_the_plain_files(run_cli, plain, tmp_path):
    by_id = _json(run_cli("ingest", "--from", "tsv", DATA / "outputs.tsv", "--testset", "wmt",
                          "--hyp-col", "hypothesis", "--id-col", "id", "--metric-col",
                          "comet=comet", "--model-slug", "tsv", "--no-intervals",
                          "--json"))  # fmt: skip
    by_source = _json(run_cli("ingest", "--from", "csv", DATA / "outputs.csv", "--testset", "wmt",
                              "--hyp-col", "hypothesis", "--src-col", "source", "--model-slug",
                              "csv", "--no-intervals", "--json"))  # fmt: skip
    # A Parquet file with the hypotheses alone answers the segments in order.
    hyps = (DATA / "sysB.en").read_text(encoding="utf-8").splitlines()
    pq.write_table(pa.table({"output": hyps}), tmp_path / "b.parquet")
    in_order = _json(run_cli("ingest", "--from", "hf", tmp_path / "b.parquet", "--testset",
                             "wmt", "--hyp-col", "output", "--model-slug", "pq", "--no-intervals",
                             "--json"))  # fmt: skip
    assert by_id[0]["scores"] == plain["sysA"]
    assert by_source[0]["scores"] == plain["sysB"] == in_order[0]["scores"]
    board = {r["model_slug"]: r for r in _json(run_cli("leaderboard", "--json"))}
    assert board["tsv"]["comet_score"] == pytest.approx(0.825)  # `comet` is COMET's column
    card = _json(run_cli("query", "SELECT run_card FROM runs WHERE model_slug = 'tsv'", "--json"))
    imported = json.loads(card[0]["run_card"])["imported_from"]
    assert imported["format"] == "table"
    assert imported["columns"]["metrics"] == {"comet_score": "comet"}


def test_an_exported_run_read_back_as_a_table_is_the_same_run(run_cli, plain, tmp_path):
    out = tmp_path / "export.jsonl"
    assert run_cli("export", "plain-sysA", "--out", out).exit_code == 0
    [again] = _json(run_cli("ingest", "--from", "jsonl", out, "--testset", "wmt", "--hyp-col",
                            "hypothesis", "--src-col", "source", "--model-slug", "plain-sysA",
                            "--json"))  # fmt: skip
    assert again["action"] == "unchanged"


def test_comet_scores_become_runs_with_the_comet_model_as_signature(run_cli, plain):
    runs = _json(run_cli("ingest", "--from", "comet", DATA / "comet-scores.json", "--testset",
                         "wmt", "--comet-model", COMET_MODEL, "--no-intervals",
                         "--json"))  # fmt: skip
    assert [(r["model_slug"], r["scores"]) for r in runs] == [
        ("sysA", plain["sysA"]), ("sysB", plain["sysB"])
    ]  # fmt: skip
    board = {r["model_slug"]: r for r in _json(run_cli("leaderboard", "--json"))}
    segments = json.loads((DATA / "comet-scores.json").read_text(encoding="utf-8"))["sysA.en"]
    mean = sum(s["COMET"] for s in segments) / len(segments)
    assert board["sysA"]["comet_score"] == pytest.approx(mean, abs=1e-12)
    assert board["sysA"]["metric_signatures"]["comet_score"] == f"comet|model:{COMET_MODEL}"
    assert board["plain-sysA"]["comet_score"] is None
    assert board["sysA"]["signature_differs"] == []


def test_comet_scores_of_another_model_are_marked_not_comparable(run_cli, tmp_path):
    other = tmp_path / "other.json"
    shutil.copy(DATA / "comet-scores.json", other)
    _json(run_cli("ingest", "--from", "comet", DATA / "comet-scores.json", "--comet-model",
                  COMET_MODEL, "--no-intervals", "--json"))  # fmt: skip
    doc = json.loads(other.read_text(encoding="utf-8"))
    other.write_text(json.dumps({"sysC.en": doc["sysA.en"]}), encoding="utf-8")
    _json(run_cli("ingest", "--from", "comet", other, "--comet-model", "Unbabel/XCOMET-XL",
                  "--testset", "comet-scores", "--no-intervals", "--json"))  # fmt: skip
    board = {r["model_slug"]: r for r in _json(run_cli("leaderboard", "--json"))}
    assert board["sysC"]["signature_differs"] == ["comet_score"]
    assert board["sysA"]["signature_differs"] == board["sysB"]["signature_differs"] == []
    table = run_cli("leaderboard")
    assert "comet_score computed as comet|model:Unbabel/XCOMET-XL" in table.output


def test_an_lm_eval_sample_log_is_a_run_of_the_harness_model(run_cli, plain):
    [run] = _json(run_cli("ingest", "--from", "lm-eval", SAMPLES, "--testset", "wmt",
                          "--lm-eval-results", RESULTS, "--no-intervals", "--json"))  # fmt: skip
    assert (run["model_slug"], run["condition"]) == ("my-org__tiny-mt", "0-shot")
    assert run["scores"] == plain["sysA"]  # the leading spaces are not part of the text
    [alone] = _json(run_cli("ingest", "--from", "lm-eval", SAMPLES, "--no-intervals", "--json"))
    assert alone["model_slug"] == "my-org__tiny-mt" and alone["test_set"] == "wmt16-de-en"
    assert alone["scores"] == plain["sysA"]


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ((), ("--from", "comet", "c.json"), "give --comet-model"),
        (("c.json", '{"s.en": [{"src": "a", "COMET": 0.5}]}'),
         ("--from", "comet", "c.json", "--comet-model", "m"), 'c.json: $["s.en"][0].mt: missing'),
        (("t.tsv", "h\nx\n"), ("--from", "tsv", "t.tsv", "--hyp-col", "h", "--testset", "wmt",
                               "--model-slug", "m"), "t.tsv: has 1 rows but test set 'wmt' has 6"),
        (("t.tsv", "h\nx\n"), ("--from", "tsv", "t.tsv", "--hyp-col", "nope", "--model-slug", "m",
                               "--testset", "wmt"), "t.tsv:2: no column 'nope'"),
        (("s.jsonl", '{"doc_id": 0}\n{bad\n'), ("--from", "lm-eval", "s.jsonl", "--src-col", "x"),
         "s.jsonl:2: not JSON"),
        ((), ("--hyp-col", "h", "x.json"), "add --from"),
    ],
)  # fmt: skip
def test_bad_foreign_files_are_refused_and_change_nothing(
    run_cli, db_path, plain, tmp_path, monkeypatch, files, args, message
):
    monkeypatch.chdir(tmp_path)
    if files:
        (tmp_path / files[0]).write_text(files[1], encoding="utf-8")
    else:
        (tmp_path / "c.json").write_text("{}", encoding="utf-8")
    before = snapshot(db_path)
    done = run_cli("ingest", *args)
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert snapshot(db_path) == before


def test_runs_exported_as_lm_eval_logs_are_read_back_as_the_same_runs(run_cli, plain, tmp_path):
    # The same sources with a reference of its own (one test set per set of texts).
    refs = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    ref = tmp_path / "lang.en"
    ref.write_text("".join(r + "\n" for r in [*refs[:-1], refs[-1] + " (revised)"]), "utf-8")
    added = run_cli("testset", "add", "lang", "--src", DATA / "src.de", "--ref", ref,
                    "--src-lang", "de", "--tgt-lang", "en")  # fmt: skip
    assert added.exit_code == 0, added.output
    [stored] = _json(run_cli("ingest", "--testset", "lang", "--hyp", DATA / "sysB.en",
                             "--model-slug", "sys-b", "--json"))  # fmt: skip
    out = tmp_path / "logs"
    done = _json(run_cli("export", "sys-b", "plain-sysA", "--format", "lm-eval", "--out", out,
                         "--json"))  # fmt: skip
    assert done["records"] == 12 and len(done["files"]) == 2
    [log] = sorted((out / "sys-b").glob("samples_lang-de-en_*.jsonl"))
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert first["doc"]["translation"] == {"de": "Guten Morgen.", "en": "Good morning."}
    assert first["filtered_resps"] == ["Morning."] and first["bleu"] == [
        "Good morning.",
        "Morning.",
    ]
    # The task names its languages: the source field is found without --src-col.
    [again] = _json(run_cli("ingest", "--from", "lm-eval", log, "--testset", "lang", "--json"))
    assert (again["action"], again["run_id"]) == ("unchanged", stored["run_id"])
    [other] = sorted((out / "plain-sysA").glob("samples_wmt_*.jsonl"))
    [back] = _json(run_cli("ingest", "--from", "lm-eval", other, "--testset", "wmt", "--src-col",
                           "doc.translation.src", "--json"))  # fmt: skip
    assert back["action"] == "unchanged" and back["model_slug"] == "plain-sysA"


def test_each_imported_format_exports_the_records_it_was_given(run_cli, plain, tmp_path):
    def exported(slug):
        out = tmp_path / f"{slug}.jsonl"
        assert run_cli("export", slug, "--out", out).exit_code == 0
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]

    run_cli("ingest", "--from", "comet", DATA / "comet-scores.json", "--testset", "wmt",
            "--comet-model", COMET_MODEL, "--no-intervals")  # fmt: skip
    comet = json.loads((DATA / "comet-scores.json").read_text(encoding="utf-8"))["sysB.en"]
    assert [(r["source"], r["references"], r["hypothesis"], r["metrics"]["comet_score"])
            for r in exported("sysB")] == [
        (s["src"], [s["ref"]], s["mt"], s["COMET"]) for s in comet
    ]  # fmt: skip
    run_cli("ingest", "--from", "tsv", DATA / "outputs.tsv", "--testset", "wmt", "--hyp-col",
            "hypothesis", "--id-col", "id", "--metric-col", "comet=comet", "--model-slug", "tsv",
            "--no-intervals")  # fmt: skip
    lines = (DATA / "outputs.tsv").read_text(encoding="utf-8").splitlines()[1:]
    rows = [line.split("\t") for line in lines]
    assert [
        (r["source"], r["hypothesis"], r["metrics"]["comet_score"]) for r in exported("tsv")
    ] == [(src, hyp, float(score)) for _id, src, hyp, score in rows]
    run_cli("ingest", "--from", "lm-eval", SAMPLES, "--testset", "wmt", "--model-slug", "lm",
            "--no-intervals")  # fmt: skip
    samples = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    assert [(r["source"], r["references"], r["hypothesis"]) for r in exported("lm")] == [
        (s["doc"]["translation"]["de"], [s["target"].strip()], s["filtered_resps"][0].strip())
        for s in samples
    ]


def test_what_comet_score_prints_is_read_with_the_files_it_names(run_cli, plain, tmp_path,
                                                                 monkeypatch):  # fmt: skip
    monkeypatch.chdir(tmp_path)  # the files are found beside the output
    runs = _json(run_cli("ingest", "--from", "comet", DATA / "comet-scores.txt", "--testset",
                         "wmt", "--comet-model", COMET_MODEL, "--no-intervals",
                         "--json"))  # fmt: skip
    assert [(r["model_slug"], r["scores"]) for r in runs] == [
        ("sysA", plain["sysA"]), ("sysB", plain["sysB"])
    ]  # fmt: skip
    board = {r["model_slug"]: r for r in _json(run_cli("leaderboard", "--json"))}
    segments = json.loads((DATA / "comet-scores.json").read_text(encoding="utf-8"))["sysB.en"]
    printed = [round(s["COMET"], 4) for s in segments]  # comet-score prints 4 decimals
    assert board["sysB"]["comet_score"] == pytest.approx(sum(printed) / len(printed), abs=1e-12)
    bad = tmp_path / "bad.txt"
    bad.write_text("sysA.en\tSegment 0\tscore: 0.5\nnot a comet line\n", encoding="utf-8")
    refused = run_cli("ingest", "--from", "comet", bad, "--testset", "wmt", "--comet-model", "m")
    assert refused.exit_code == 2 and f"{bad}:2: not a line comet-score prints" in refused.output


def test_an_exported_log_keeps_condition_errors_and_a_dotted_model_name(run_cli, plain, tmp_path):
    report = tmp_path / "r.json"
    src = (DATA / "src.de").read_text(encoding="utf-8").splitlines()
    ref = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    hyp = (DATA / "sysA.en").read_text(encoding="utf-8").splitlines()
    texts = zip(src, ref, hyp, strict=True)
    entries = [{"source": s, "expected": r, "predicted": h} for s, r, h in texts]
    entries[3] = {**entries[3], "predicted": "", "error": "timeout"}
    report.write_text(json.dumps({"model_slug": "Llama-3.1-8B", "condition": "few-shot",
                                  "entries": entries}), encoding="utf-8")  # fmt: skip
    [stored] = _json(run_cli("ingest", report, "--testset", "wmt", "--json"))
    out = tmp_path / "logs"
    _json(run_cli("export", stored["run_id"], "--format", "lm-eval", "--out", out, "--json"))
    [log] = sorted((out / "Llama-3.1-8B").glob("samples_*.jsonl"))
    [back] = _json(run_cli("ingest", "--from", "lm-eval", log, "--testset", "wmt", "--src-col",
                           "doc.translation.src", "--json"))  # fmt: skip
    assert (back["action"], back["run_id"]) == ("unchanged", stored["run_id"])
    assert (back["model_slug"], back["condition"]) == ("Llama-3.1-8B", "few-shot")


def test_a_reports_per_entry_comet_fills_the_leaderboards_comet_column(run_cli, tmp_path):
    src = (DATA / "src.de").read_text(encoding="utf-8").splitlines()
    ref = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    entries = [{"source": s, "expected": r, "predicted": r, "comet": 0.5 + i / 10}
               for i, (s, r) in enumerate(zip(src, ref, strict=True))]  # fmt: skip
    report = tmp_path / "c.json"
    report.write_text(json.dumps({"model_slug": "c", "entries": entries}), encoding="utf-8")
    assert run_cli("ingest", report, "--no-intervals").exit_code == 0
    [row] = _json(run_cli("leaderboard", "--json"))
    assert row["comet_score"] == pytest.approx(0.75)
    assert row["ingested_metrics"] == ["comet_score"]


def test_comet_printed_output_reads_hypotheses_only_beside_it_or_under_inputs_dir(
    run_cli, plain, tmp_path, db_path
):
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.txt").write_text("a line that must not be stored\n", encoding="utf-8")
    job = tmp_path / "job"
    job.mkdir()
    (job / "link.en").symlink_to(outside / "secret.txt")
    before = snapshot(db_path)
    for named in (str(outside / "secret.txt"), "../private/secret.txt", "link.en"):
        printed = job / "scores.txt"
        printed.write_text(f"{named}\tSegment 0\tscore: 0.5\n", encoding="utf-8")
        refused = run_cli("ingest", "--from", "comet", printed, "--testset", "wmt",
                          "--comet-model", COMET_MODEL)  # fmt: skip
        assert refused.exit_code == 2, refused.output
        assert f"{printed}: names {named!r}, which is {outside / 'secret.txt'}, outside" in (
            refused.stderr
        )
        assert snapshot(db_path) == before
    # The translation files in a folder the user names are read.
    printed = job / "scores.txt"
    printed.write_text((DATA / "comet-scores.txt").read_text(encoding="utf-8"), encoding="utf-8")
    missing = run_cli("ingest", "--from", "comet", printed, "--testset", "wmt",
                      "--comet-model", COMET_MODEL)  # fmt: skip
    assert missing.exit_code == 2 and "no such file is beside it" in missing.stderr
    runs = _json(run_cli("ingest", "--from", "comet", printed, "--testset", "wmt",
                         "--comet-model", COMET_MODEL, "--inputs-dir", DATA, "--no-intervals",
                         "--json"))  # fmt: skip
    assert [(r["model_slug"], r["scores"]) for r in runs] == [
        ("sysA", plain["sysA"]), ("sysB", plain["sysB"])
    ]  # fmt: skip
