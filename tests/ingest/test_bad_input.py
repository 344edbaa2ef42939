"""Bad ingest input: one-line error naming file and place, exit 2, warehouse unchanged."""

from __future__ import annotations

import json

import pytest

from tests.backends import TEMPLATES
from tests.cli.test_bad_input import _assert_rejected
from tests.conftest import snapshot

SRC = ["one", "two", "three"]
REF = ["uno", "dos", "tres"]


@pytest.fixture
def populated(run_cli, write_lines, db_path):
    """A warehouse with a test set `ts` and one run already ingested (a copy: made once)."""

    def make(path):
        s, r = write_lines("s", SRC), write_lines("r", REF)
        assert run_cli("testset", "add", "ts", "--src", s, "--ref", r, db=path).exit_code == 0
        ok = run_cli(
            "ingest", "--testset", "ts", "--hyp", write_lines("h0", REF), "--model-slug", "m",
            db=path,
        )  # fmt: skip
        assert ok.exit_code == 0, ok.output

    TEMPLATES.copy_built("ingest-bad-input", make, db_path)
    return snapshot(db_path)


def _card(tmp_path, doc, name="card.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _entries():
    return [
        {"id": str(i), "source": s, "expected": r, "predicted": r}
        for i, (s, r) in enumerate(zip(SRC, REF, strict=True))
    ]


def test_hypothesis_file_with_wrong_line_count(run_cli, write_lines, populated, db_path):
    hyp = write_lines("h", ["a", "b"])
    result = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m")
    _assert_rejected(result, db_path, populated, f"{hyp}:3:", "has 2 lines", "3 segments")


def test_hypothesis_file_with_invalid_utf8(run_cli, write_lines, populated, db_path):
    hyp = write_lines("h", b"a\nb\xc0\nc\n")
    result = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m")
    _assert_rejected(result, db_path, populated, f"{hyp}:2:", "invalid UTF-8")


def test_unknown_test_set(run_cli, write_lines, populated, db_path):
    result = run_cli(
        "ingest", "--testset", "nope", "--hyp", write_lines("h", REF), "--model-slug", "m"
    )
    _assert_rejected(result, db_path, populated, "unknown test set 'nope'")


def test_missing_model_slug(run_cli, write_lines, populated, db_path):
    result = run_cli("ingest", "--testset", "ts", "--hyp", write_lines("h", REF))
    _assert_rejected(result, db_path, populated, "--model-slug is required")


def test_json_that_does_not_parse_names_line_and_column(run_cli, tmp_path, populated, db_path):
    path = _card(tmp_path, '{\n  "model_slug": "m",\n  "entries": [,]\n}')
    result = run_cli("ingest", path)
    _assert_rejected(result, db_path, populated, f"{path}:3:", "invalid JSON at column 15")


@pytest.mark.parametrize("escape", ["\\ud83d", "\\ude00", "\\ude00\\ud83d"])
def test_half_surrogate_escapes_are_rejected_with_their_line(
    run_cli, tmp_path, populated, db_path, escape
):
    entries = json.dumps(_entries(), indent=1).replace('"uno"', f'"uno{escape}"', 1)
    path = _card(tmp_path, '{"model_slug": "m",\n"entries": ' + entries + "}")
    line = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if escape in x)
    result = run_cli("ingest", path)
    _assert_rejected(result, db_path, populated, f"{path}:{line}:", "half of a surrogate pair")


def test_a_whole_surrogate_pair_escape_is_a_character(run_cli, tmp_path, populated, db_path):
    entries = json.dumps(_entries()).replace('"uno"', '"uno \\ud83d\\ude00"', 1)
    result = run_cli("ingest", _card(tmp_path, '{"model_slug": "m2", "entries": ' + entries + "}"))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"model_slug": "m", "elapsed_seconds": NaN, "entries": []}', "NaN is not allowed"),
        ('{"model_slug": "m", "elapsed_seconds": Infinity}', "Infinity is not allowed"),
        ('{"model_slug": "m", "elapsed_seconds": -Infinity}', "-Infinity is not allowed"),
    ],
)
def test_nan_and_infinity_are_rejected(run_cli, tmp_path, populated, db_path, text, fragment):
    result = run_cli("ingest", _card(tmp_path, text))
    _assert_rejected(result, db_path, populated, fragment)


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        ({"model_slug": 3}, "$.model_slug: must be a non-empty string, got 3"),
        ({"condition": ["x"]}, "$.condition: must be a string, got a list"),
        ({"elapsed_seconds": "fast"}, "$.elapsed_seconds: must be a number"),
        ({"elapsed_seconds": -1}, "$.elapsed_seconds: must not be negative"),
        ({"totals": {"prompt_tokens": -5}}, "$.totals.prompt_tokens: must not be negative, got -5"),
        ({"totals": {"completion_tokens": 1.5}}, "$.totals.completion_tokens: must be a whole"),
        ({"totals": {"total_cost_usd": -0.01}}, "$.totals.total_cost_usd: must not be negative"),
        ({"totals": {"cost_per_entry_usd": -2}}, "$.totals.cost_per_entry_usd: must not be neg"),
        ({"totals": "lots"}, "$.totals: must be an object, got a string"),
        ({"dataset": {"id": 5}}, "$.dataset.id: must be a string, got 5"),
        ({"created_at": "yesterday"}, "$.created_at: must be an ISO 8601 timestamp"),
        ({"entries": {"a": 1}}, "$.entries: must be a list, got an object"),
        ({"entries": [1]}, "$.entries[0]: must be an object, got 1"),
        ({"entries": [{"latency_s": -0.5}]}, "$.entries[0].latency_s: must not be negative"),
        ({"entries": [{"usage": {"prompt_tokens": -1}}]}, "$.entries[0].usage.prompt_tokens"),
        ({"entries": [{"expected": 3}]}, "$.entries[0].expected: must be a string or a list"),
        ({"entries": [{"difficulty": "hard"}]}, "$.entries[0]: difficulty must be a number"),
        (
            {"entries": [{"id": "x", "source": "s", "expected": "e"}]},
            "$.entries[0].predicted: missing and the entry has no error",
        ),
        ({"entries": [{"source": "s", "predicted": "p"}]}, "$.entries[0].expected: missing"),
        ({"entries": []}, "$.entries: no per-entry results"),
    ],
)
def test_wrong_types_and_negative_values(run_cli, tmp_path, populated, db_path, patch, fragment):
    doc = {"model_slug": "m", "entries": _entries()}
    doc.update(patch)
    path = _card(tmp_path, doc)
    result = run_cli("ingest", path)
    _assert_rejected(result, db_path, populated, str(path), fragment)


def test_duplicate_entry_ids_in_a_report(run_cli, tmp_path, populated, db_path):
    entries = _entries()
    entries[2]["id"] = "0"
    path = _card(tmp_path, {"model_slug": "m", "entries": entries})
    result = run_cli("ingest", path)
    _assert_rejected(result, db_path, populated, "duplicate segment id '0'")


def test_run_card_entry_with_unknown_id(run_cli, write_lines, tmp_path, populated, db_path):
    card = _card(tmp_path, {"model_slug": "m", "entries": [{"id": "zzz", "latency_s": 1}]})
    result = run_cli(
        "ingest", "--testset", "ts", "--hyp", write_lines("h", REF), "--run-card", card
    )
    _assert_rejected(result, db_path, populated, f"{card}:", "id 'zzz' is not in the test set")


def test_conflicting_model_slug(run_cli, write_lines, tmp_path, populated, db_path):
    card = _card(tmp_path, {"model_slug": "a"})
    result = run_cli(
        "ingest",
        "--testset",
        "ts",
        "--hyp",
        write_lines("h", REF),
        "--run-card",
        card,
        "--model-slug",
        "b",
    )
    _assert_rejected(result, db_path, populated, "model_slug is 'a' but --model-slug says 'b'")


def test_one_bad_file_among_several_writes_nothing(run_cli, tmp_path, populated, db_path):
    good = _card(tmp_path, {"model_slug": "new", "entries": _entries()}, "good.json")
    bad = _card(
        tmp_path, {"model_slug": "new", "elapsed_seconds": -3, "entries": _entries()}, "bad.json"
    )
    result = run_cli("ingest", good, bad)
    _assert_rejected(result, db_path, populated, f"{bad}:", "must not be negative")


def test_missing_report_file(run_cli, tmp_path, populated, db_path):
    missing = tmp_path / "gone.json"
    result = run_cli("ingest", missing)
    _assert_rejected(result, db_path, populated, str(missing), "no such file")


def test_mixing_reports_and_plain_files_is_a_usage_error(run_cli, tmp_path, populated, db_path):
    path = _card(tmp_path, {"model_slug": "m", "entries": _entries()})
    result = run_cli("ingest", path, "--testset", "ts", "--hyp", path)
    assert result.exit_code == 2
    assert "not both" in result.stderr
    assert snapshot(db_path) == populated


def test_a_run_far_below_the_tm_baseline_is_warned_about(run_cli, write_lines, db_path):
    import random

    from tests.conftest import VOCABULARY

    rng = random.Random(3)
    src = [" ".join(rng.choice(VOCABULARY) for _ in range(9)) for _ in range(40)]
    ref = [s.upper() for s in src]
    # The training corpus holds the test pairs: the TM baseline copies every reference.
    assert run_cli("corpus", "add", "tr", "--src", write_lines("tr.s", src),
                   "--tgt", write_lines("tr.t", ref)).exit_code == 0  # fmt: skip
    assert run_cli("testset", "add", "ts", "--src", write_lines("s", src),
                   "--ref", write_lines("r", ref)).exit_code == 0  # fmt: skip
    assert run_cli("audit", "--train", "tr", "--testset", "ts").exit_code == 0
    decent = [r.rsplit(" ", 1)[0] for r in ref]  # the last word of each line lost
    shifted = ref[1:] + ref[:1]  # every line one off: far below copying the training data
    good = run_cli("ingest", "--testset", "ts", "--hyp", write_lines("good", decent),
                   "--model-slug", "good")  # fmt: skip
    assert good.exit_code == 0 and "TM baseline" not in good.output
    bad = run_cli("ingest", "--testset", "ts", "--hyp", write_lines("bad", shifted),
                  "--model-slug", "bad", "--json")  # fmt: skip
    assert bad.exit_code == 0, bad.output
    [result] = json.loads(bad.stdout)
    assert any("below 50% of the TM baseline's 100.00 (training corpus tr)" in w
               for w in result["warnings"])  # fmt: skip
