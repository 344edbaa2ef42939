"""What a new user trips over at ingest: test-set identity, wrong-but-plausible input warned about
and stored, metric options recorded, identical re-ingest answered without scoring."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sacrebleu.metrics import BLEU, CHRF

from tests.conftest import VOCABULARY, snapshot

N = 40


def _texts(seed: int = 3) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    src = [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(5, 9))) for _ in range(N)]
    ref = [" ".join(w.upper() for w in s.split()[::-1]) + f" {i}" for i, s in enumerate(src)]
    return src, ref


@pytest.fixture
def registered(run_cli, write_lines):
    """A registered test set `ts` with ids s0..s39 (segment metadata) and its texts."""
    src, ref = _texts()
    meta = write_lines("meta.jsonl", [json.dumps({"id": f"s{i}"}) for i in range(N)])
    added = run_cli(
        "testset", "add", "ts", "--src", write_lines("src", src), "--ref",
        write_lines("ref", ref), "--segments-meta", meta,
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    return src, ref


def _report(tmp_path, entries, name="report.json", **doc):
    path = tmp_path / name
    path.write_text(json.dumps({"model_slug": "sys", "dataset": {"id": "ts"}, **doc,
                                "entries": entries}))  # fmt: skip
    return path


def _entries(src, ref, hyps, ids=True):
    return [
        {**({"id": f"s{i}"} if ids else {}), "source": s, "expected": r, "predicted": h}
        for i, (s, r, h) in enumerate(zip(src, ref, hyps, strict=True))
    ]


def test_a_report_joins_a_registered_test_set_by_id_or_by_content(run_cli, registered, tmp_path):
    src, ref = registered
    hyps = [r.lower() for r in ref]
    shuffled = list(zip(src, ref, hyps, range(N), strict=True))
    random.Random(1).shuffle(shuffled)
    by_id = _report(tmp_path, [
        {"id": f"s{i}", "source": s, "expected": r, "predicted": h} for s, r, h, i in shuffled
    ])  # fmt: skip
    result = run_cli("ingest", by_id, "--testset", "ts", "--no-intervals", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)[0]
    assert doc["test_set"] == "ts" and not doc["test_set_created"]
    expected = BLEU(tokenize="13a").corpus_score(hyps, [ref]).score
    assert doc["scores"]["bleu"] == pytest.approx(expected, abs=1e-9)
    # Without ids the entries are found by their source text: the same run.
    by_content = _report(tmp_path, _entries(src, ref, hyps, ids=False), name="noid.json")
    again = json.loads(run_cli("ingest", by_content, "--testset", "ts", "--json").stdout)[0]
    assert again["run_id"] == doc["run_id"] and again["action"] == "unchanged"
    listed = json.loads(run_cli("testset", "list", "--json").stdout)
    assert [t["name"] for t in listed] == ["ts"]


def test_a_report_that_does_not_match_the_test_set_is_refused_naming_the_entry(
    run_cli, registered, tmp_path, db_path
):
    src, ref = registered
    entries = _entries(src, ref, ref)
    entries[7]["source"] = "a different sentence"
    before = snapshot(db_path)
    wrong = run_cli("ingest", _report(tmp_path, entries), "--testset", "ts")
    assert wrong.exit_code == 2
    assert "$.entries[7]" in wrong.stderr and "'s7'" in wrong.stderr and "differs" in wrong.stderr
    short = run_cli("ingest", _report(tmp_path, _entries(src, ref, ref)[:-1]), "--testset", "ts")
    assert short.exit_code == 2 and "39 of the 40 segments" in short.stderr
    assert "'s39'" in short.stderr
    assert snapshot(db_path) == before


def test_plausible_but_wrong_input_is_warned_about_stored_and_reported(
    run_cli, registered, tmp_path, write_lines
):
    src, ref = registered
    _, other = _texts(seed=9)
    cases = {
        "empty": [""] * N,
        "untranslated": list(src),
        "shifted": [ref[0], *ref[:-1]],
        "some-empty": ["" if i % 8 == 0 else r.lower() for i, r in enumerate(ref)],
        "references": list(ref),
        "other-test-set": [r.lower() for r in other],
    }
    messages = {
        "empty": "hypotheses are empty",
        "untranslated": "equal their source text",
        "shifted": "shifted by -1 line",
        "some-empty": "5 of 40 hypotheses (12%) are empty",
        "references": "40 of 40 hypotheses equal a reference word for word",
        "other-test-set": "match their own references no better than other segments'",
    }
    for name, hyps in cases.items():
        hyp = write_lines(f"{name}.txt", hyps)
        result = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", name,
                         "--no-intervals", "--json")  # fmt: skip
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)[0]
        assert any(messages[name] in w for w in doc["warnings"]), doc["warnings"]
        shown = run_cli("report", name)
        assert messages[name] in shown.stderr
    good = write_lines("good.txt", [r.lower() for r in ref])
    first = run_cli(
        "ingest", "--testset", "ts", "--hyp", good, "--model-slug", "a", "--no-intervals"
    )
    assert first.exit_code == 0
    second = run_cli(
        "ingest", "--testset", "ts", "--hyp", good, "--model-slug", "b", "--no-intervals", "--json"
    )
    warnings = json.loads(second.stdout)[0]["warnings"]
    assert any("already stored as run" in w and "'a'" in w for w in warnings)
    stored = json.loads(run_cli("runs", "show", "b", "--json").stdout)["warnings"]
    assert stored == warnings


def test_a_line_lost_in_one_place_and_added_in_another_is_found_where_it_happened(
    run_cli, write_lines
):
    # The bundled example's training sentences as a test set of 251 segments.
    examples = Path(__file__).resolve().parents[2] / "warehouse" / "examples"
    src = (examples / "train.en").read_text(encoding="utf-8").splitlines()
    ref = (examples / "train.es").read_text(encoding="utf-8").splitlines()
    added = run_cli(
        "testset", "add", "long", "--src", write_lines("s", src), "--ref", write_lines("r", ref)
    )
    assert added.exit_code == 0, added.output
    good = [r.lower() if i % 3 else r for i, r in enumerate(ref)]
    lost = [*good[:150], *good[151:], ""]  # the line count still agrees
    for name, hyps in (("good", good), ("lost", lost)):
        result = run_cli(
            "ingest", "--testset", "long", "--hyp", write_lines(f"{name}.hyp", hyps),
            "--model-slug", name, "--no-intervals", "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        warnings = json.loads(result.stdout)[0]["warnings"]
        if name == "good":
            assert warnings == []
        else:
            [found] = warnings
            assert "hypotheses 145-168 (and 3 more stretch(es) of 24)" in found
            assert "shifted by +1 line" in found


def test_language_labels_that_contradict_each_other_are_warned_about(
    run_cli, write_lines, tmp_path
):
    examples = Path(__file__).resolve().parents[2] / "warehouse" / "examples"
    train = ["--src", examples / "train.en", "--tgt", examples / "train.es"]
    assert (
        run_cli("corpus", "add", "tr", *train, "--src-lang", "en", "--tgt-lang", "es").exit_code
        == 0
    )
    test = ["--src", examples / "test.en", "--ref", examples / "test.es"]
    assert (
        run_cli("testset", "add", "ts", *test, "--src-lang", "es", "--tgt-lang", "en").exit_code
        == 0
    )
    audited = run_cli("audit", "--train", "tr", "--testset", "ts", "--json")
    assert audited.exit_code == 0, audited.output
    assert any(
        "test set 'ts' is labelled es→en but training corpus 'tr' en→es: the opposite direction"
        in w
        for w in json.loads(audited.stdout)["warnings"]
    )
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"model_slug": "m", "dataset": {"language_pair": "fr-de"}}))
    result = run_cli(
        "ingest", "--testset", "ts", "--hyp", examples / "demo-large.zero-shot.hyp",
        "--run-card", card, "--no-intervals", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert any(
        "dataset.language_pair is labelled fr→de but test set 'ts' es→en" in w
        for w in json.loads(result.stdout)[0]["warnings"]
    )


def test_run_card_claims_and_partial_entries_are_warned_about(
    run_cli, registered, tmp_path, write_lines
):
    _src, ref = registered
    hyp = write_lines("h.txt", ref)
    card = tmp_path / "card.json"
    card.write_text(json.dumps({
        "model_slug": "m", "scores": {"bleu": 12.5, "chrf_plus_plus": 100.0},
        "entries": [{"id": f"s{i}", "latency_s": 0.5} for i in range(10)],
    }))  # fmt: skip
    result = run_cli(
        "ingest", "--testset", "ts", "--hyp", hyp, "--run-card", card, "--no-intervals", "--json"
    )
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)[0]["warnings"]
    assert any("says bleu = 12.5, computed 100.00 (bleu nrefs:1|case:mixed|" in w for w in warnings)
    assert not any("chrf_plus_plus" in w for w in warnings)  # the claim is right
    assert any("cover 10 of 40 segments" in w for w in warnings)


@pytest.mark.parametrize(
    ("args", "signature_part", "oracle"),
    [
        (("--tokenize", "char"), "tok:char", BLEU(tokenize="char")),
        (("--lowercase",), "case:lc", BLEU(lowercase=True)),
        (("--tokenize", "intl"), "tok:intl", BLEU(tokenize="intl")),
    ],
)
def test_bleu_options_are_computed_and_recorded(
    run_cli, registered, write_lines, args, signature_part, oracle
):
    _src, ref = registered
    hyps = [r.lower() + " extra" for r in ref]
    hyp = write_lines("h.txt", hyps)
    result = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m",
                     "--no-intervals", *args, "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)[0]
    assert doc["scores"]["bleu"] == pytest.approx(oracle.corpus_score(hyps, [ref]).score, 1e-12)
    shown = json.loads(run_cli("runs", "show", doc["run_id"], "--json").stdout)
    assert signature_part in shown["signatures"]["bleu"]


def test_chrf_without_word_order_and_ter_off(run_cli, registered, write_lines):
    _src, ref = registered
    hyps = [r.lower() for r in ref]
    hyp = write_lines("h.txt", hyps)
    args = ("--chrf-word-order", "0", "--no-ter", "--no-intervals", "--json")
    result = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m", *args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)[0]
    assert doc["scores"]["chrf"] == pytest.approx(CHRF().corpus_score(hyps, [ref]).score, 1e-12)
    assert doc["scores"]["ter"] is None
    shown = json.loads(run_cli("runs", "show", doc["run_id"], "--json").stdout)
    assert "nw:0" in shown["signatures"]["chrf"] and "ter" not in shown["signatures"]
    board = json.loads(run_cli("leaderboard", "--json").stdout)
    assert board[0]["ter"] is None
    default = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m", "--json")
    assert json.loads(default.stdout)[0]["run_id"] != doc["run_id"]  # other settings, other run


def test_identical_reingest_is_recognised_without_scoring(
    run_cli, registered, write_lines, monkeypatch
):
    _src, ref = registered
    hyp = write_lines("h.txt", ref)
    args = ("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m", "--json")
    first = json.loads(run_cli(*args).stdout)[0]

    def no_scoring(*_args, **_kwargs):
        raise AssertionError("an identical run was scored again")

    monkeypatch.setattr("warehouse.ingest.runs._compute_stats", no_scoring)
    again = run_cli(*args)
    assert again.exit_code == 0, again.output
    doc = json.loads(again.stdout)[0]
    assert doc["action"] == "unchanged" and doc["run_id"] == first["run_id"]
    assert doc["scores"] == first["scores"]


def test_language_codes_are_normalised(run_cli, write_lines):
    lines = write_lines("x", ["a", "b"])
    added = run_cli(
        "testset", "add", "t2", "--src", lines, "--ref", lines,
        "--src-lang", "EN", "--tgt-lang", "es_es", "--json",
    )  # fmt: skip
    info = json.loads(added.stdout)["corpus"]
    assert (info["src_lang"], info["tgt_lang"]) == ("en", "es-ES")


def test_a_tokenizer_whose_package_is_missing_is_a_one_line_error(run_cli, registered, write_lines):
    try:
        import MeCab  # noqa: F401 — installed: the tokenizer works and there is nothing to test
    except ImportError:
        pass
    else:
        pytest.skip("mecab is installed here")
    hyp = write_lines("h.txt", registered[1])
    result = run_cli(
        "ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m", "--tokenize", "ja-mecab"
    )
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "sacrebleu[ja]" in result.stderr
