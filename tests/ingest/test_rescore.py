"""`tame-wh rescore`: stored runs scored again from their stored hypotheses under other metric
options — the same run a fresh ingest with those options stores, beside the run as ingested,
which keeps its statistics; boards list the runs as ingested unless asked for other options."""

# ruff: noqa: RUF001 (the test text holds Unicode punctuation on purpose)
from __future__ import annotations

import json

import pytest
from sacrebleu.metrics import BLEU, CHRF

from tests.conftest import snapshot

# French with Unicode punctuation and symbols, where sacrebleu's intl tokenizer splits
# differently from 13a (so the two signatures give different BLEU).
SRC = [f"source sentence {i}" for i in range(12)]
REFS = [
    "« Bonjour », dit-il — puis il partit…",
    "Le prix a augmenté de 5 % : 12,50 € au lieu de 11 €.",
    "L’été dernier, nous sommes allés à Montréal.",
    "Est-ce que tu viens ? Oui ! Bien sûr…",
    "Les résultats (voir tableau 3) sont « encourageants ».",
    "Il a dit : « Ce n’est pas possible » – et il avait raison.",
    "Le train de 8 h 15 part du quai n° 4.",
    "Elle a acheté 3 kg de pommes — et 2 l de lait.",
    "« Où est la gare ? » demanda-t-elle.",
    "Le © appartient à l’auteur ; tous droits réservés.",
    "Température : −5 °C ce matin, +3 °C l’après-midi.",
    "Voilà ! C’était « la meilleure » soirée de l’année…",
]
HYPS = [
    "« Bonjour » dit-il — puis il est parti…",
    "Le prix a augmenté de 5 % : 12,50 € au lieu de 11€.",
    "L'été dernier, nous sommes allés à Montréal.",
    "Tu viens ? Oui ! Bien sûr...",
    "Les résultats (voir le tableau 3) sont « encourageants ».",
    "Il a dit : « Ce n’est pas possible » – il avait raison.",
    "Le train de 8h15 part du quai n° 4.",
    "Elle a acheté 3 kg de pommes — et 2 litres de lait.",
    "« Où est la gare ? », demanda-t-elle.",
    "Le © est à l’auteur ; tous droits réservés.",
    "Température : −5 °C ce matin, +3 °C l’après-midi !",
    "Voilà ! C’était « la meilleure » soirée de l’année…",
]

# What only reads views or deletes rows runs on the file backend; the writes that copy a run's
# rows run on every backend (above all on a lake, where each statement goes through the catalog).
LOCAL = pytest.mark.parametrize("warehouse", ["local"], indirect=True)


@pytest.fixture
def stored(warehouse, write_lines):
    """A warehouse with one test set and one run of model `m` (13a statistics)."""
    src, ref = write_lines("src.txt", SRC), write_lines("ref.txt", REFS)
    added = warehouse.run("testset", "add", "ts", "--src", src, "--ref", ref, "--src-lang", "en",
                          "--tgt-lang", "fr")  # fmt: skip
    assert added.exit_code == 0, added.output
    done = warehouse.run("ingest", "--testset", "ts", "--hyp", write_lines("hyp.txt", HYPS),
                         "--model-slug", "m", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    return warehouse, json.loads(done.stdout)[0]["run_id"]


def _stats(warehouse, run_id):
    return warehouse.sql(
        "SELECT seg_idx, bleu_stats, chrf_stats, ter_stats FROM segment_stats WHERE run_id = ? "
        "ORDER BY seg_idx",
        [run_id],
    )


def test_rescore_equals_a_fresh_ingest_with_the_options_and_keeps_the_stored_statistics(
    stored, write_lines
):
    warehouse, source = stored
    before = _stats(warehouse, source)
    done = warehouse.run("rescore", source, "--tokenize", "intl", "--json")
    assert done.exit_code == 0, done.output
    [result] = json.loads(done.stdout)
    assert result["action"] == "added" and result["source_run_id"] == source
    assert result["run_id"] != source
    assert "tok:intl" in result["signatures"]["bleu"]
    intl = BLEU(tokenize="intl").corpus_score(HYPS, [REFS]).score
    assert result["scores"]["bleu"] == pytest.approx(intl, abs=1e-9)
    assert intl != pytest.approx(BLEU().corpus_score(HYPS, [REFS]).score)  # the options matter
    assert result["scores"]["chrf"] == pytest.approx(
        CHRF(word_order=2).corpus_score(HYPS, [REFS]).score, abs=1e-9
    )
    # The run as ingested is untouched.
    assert _stats(warehouse, source) == before
    # A fresh ingest of the same output with the same options is the same run.
    again = warehouse.run("ingest", "--testset", "ts", "--hyp", write_lines("hyp2.txt", HYPS),
                          "--model-slug", "m", "--tokenize", "intl", "--json")  # fmt: skip
    assert again.exit_code == 0, again.output
    [fresh] = json.loads(again.stdout)
    assert (fresh["action"], fresh["run_id"]) == ("unchanged", result["run_id"])
    # Scoring again under the same options changes nothing.
    tables = warehouse.tables()
    repeat = json.loads(warehouse.run("rescore", source, "--tokenize", "intl", "--json").stdout)
    assert repeat[0]["action"] == "unchanged" and repeat[0]["run_id"] == result["run_id"]
    assert warehouse.tables() == tables


def test_a_rescored_run_shares_its_sources_card_entry_metrics_and_tags(warehouse, tmp_path):
    entries = [
        {"id": f"s{i}", "source": s, "expected": r, "predicted": h, "metrics": {"comet": 0.5 + i}}
        for i, (s, r, h) in enumerate(zip(SRC, REFS, HYPS, strict=True))
    ]
    report = tmp_path / "report.json"
    card = {"model_slug": "m", "condition": "c", "entries": entries,
            "totals": {"total_cost_usd": 1.5}}  # fmt: skip
    report.write_text(json.dumps(card), encoding="utf-8")
    [run] = json.loads(warehouse.run("ingest", report, "--json").stdout)
    assert warehouse.run("runs", "tag", run["run_id"], "team=mt").exit_code == 0
    [result] = json.loads(warehouse.run("rescore", "m", "--lowercase", "--json").stdout)
    new, old = result["run_id"], run["run_id"]

    def shared(run_id):
        card = warehouse.sql(
            "SELECT run_card, total_cost_usd, created_at FROM runs WHERE run_id = ?", [run_id]
        )
        values = warehouse.sql(
            "SELECT seg_idx, metric, value FROM metric_values WHERE run_id = ? ORDER BY ALL",
            [run_id],
        )
        tags = warehouse.sql("SELECT key, value FROM run_tags WHERE run_id = ?", [run_id])
        hyps = warehouse.sql(
            "SELECT seg_idx, hyp FROM hypotheses WHERE run_id = ? ORDER BY seg_idx", [run_id]
        )
        return card, values, tags, hyps

    assert shared(new) == shared(old)
    assert len(shared(new)[1]) == len(SRC)
    settings = warehouse.sql("SELECT metric_settings FROM runs WHERE run_id = ?", [new])[0][0]
    assert json.loads(settings)["options"]["lowercase"] is True
    assert warehouse.sql("SELECT source_run_id FROM run_rescores") == [(old,)]


@LOCAL
def test_boards_list_runs_as_ingested_unless_asked_for_other_options(stored):
    warehouse, source = stored
    [result] = json.loads(warehouse.run("rescore", "--all", "--tokenize", "intl", "--json").stdout)
    derived = result["run_id"]

    def board(*args):
        done = warehouse.run("leaderboard", "--json", *args)
        assert done.exit_code == 0, done.output
        return [r["run_id"] for r in json.loads(done.stdout)]

    assert board() == [source]
    assert board("--tokenize", "intl") == [derived]
    assert board("--tokenize", "13a") == [source]
    assert board("--chrf-word-order", "0") == []
    assert warehouse.sql("SELECT run_id FROM leaderboard") == [(source,)]
    # A model slug names the run as ingested; the re-scored one is named by its id.
    assert warehouse.run("report", "m", "--json").exit_code == 0
    shown = json.loads(warehouse.run("runs", "show", derived, "--json").stdout)
    assert shown["rescored_from"] == source
    # Not a later run of the same model: nothing to compare for regressions.
    regressions = json.loads(warehouse.run("regressions", "--json").stdout)
    assert regressions["checked"] == []
    # Comparing the two scorings says which metrics they computed differently.
    compared = json.loads(warehouse.run("compare", source, derived, "--json").stdout)
    assert [w.split(" is ")[0] for w in compared["warnings"]] == ["bleu"]
    # Naming the re-scored run re-scores its source.
    again = json.loads(warehouse.run("rescore", derived, "--tokenize", "intl", "--json").stdout)
    assert again[0]["source_run_id"] == source and again[0]["action"] == "unchanged"


@LOCAL
def test_the_chrf_column_says_chrf_on_a_board_of_chrf_statistics(stored):
    warehouse, _source = stored
    assert warehouse.run("rescore", "--all", "--chrf-word-order", "0").exit_code == 0
    plain = warehouse.run("leaderboard", "--chrf-word-order", "0", "--wide").output
    assert "chrF " in plain.splitlines()[1] + " " and "chrF++" not in plain.splitlines()[1]
    assert "chrF++" in warehouse.run("leaderboard", "--wide").output.splitlines()[1]


@LOCAL
def test_deleting_the_source_leaves_the_rescored_run_as_a_run_of_its_own(stored):
    warehouse, source = stored
    [result] = json.loads(warehouse.run("rescore", source, "--tokenize", "intl", "--json").stdout)
    assert warehouse.run("runs", "delete", source, "--yes").exit_code == 0
    assert warehouse.sql("SELECT count(*) FROM run_rescores") == [(0,)]
    assert warehouse.sql("SELECT run_id FROM leaderboard") == [(result["run_id"],)]


@LOCAL
def test_deleting_a_rescored_run_removes_its_link(stored):
    warehouse, source = stored
    [result] = json.loads(warehouse.run("rescore", source, "--no-ter", "--json").stdout)
    assert result["scores"]["ter"] is None
    assert warehouse.run("runs", "delete", result["run_id"], "--yes").exit_code == 0
    assert warehouse.sql("SELECT count(*) FROM run_rescores") == [(0,)]
    assert warehouse.sql("SELECT run_id FROM runs") == [(source,)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the runs to re-score, or give --all"),
        (("m", "--all"), "name the runs to re-score, or give --all"),
        (("nosuchrun",), "unknown run 'nosuchrun'"),
        (("--all", "--testset", "nope"), "nope"),
    ],
)
def test_rescore_refuses_what_names_no_runs_and_changes_nothing(db_path, run_cli, write_lines,
                                                                args, message):  # fmt: skip
    run_cli("testset", "add", "ts", "--src", write_lines("s.txt", SRC),
            "--ref", write_lines("r.txt", REFS))  # fmt: skip
    run_cli("ingest", "--testset", "ts", "--hyp", write_lines("h.txt", HYPS), "--model-slug", "m")
    before = snapshot(db_path)
    done = run_cli("rescore", *args, "--tokenize", "intl")
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert snapshot(db_path) == before


@LOCAL
def test_options_not_given_keep_each_runs_own(warehouse, write_lines):
    src, ref = write_lines("src.txt", SRC), write_lines("ref.txt", REFS)
    warehouse.run("testset", "add", "ts", "--src", src, "--ref", ref)
    [intl] = json.loads(warehouse.run("ingest", "--testset", "ts", "--hyp",
                                      write_lines("hyp.txt", HYPS), "--model-slug", "m",
                                      "--tokenize", "intl", "--json").output)  # fmt: skip
    [lower] = json.loads(warehouse.run("rescore", "m", "--lowercase", "--json").stdout)
    assert "tok:intl" in lower["signatures"]["bleu"] and "case:lc" in lower["signatures"]["bleu"]
    expected = BLEU(tokenize="intl", lowercase=True).corpus_score(HYPS, [REFS]).score
    assert lower["scores"]["bleu"] == pytest.approx(expected, abs=1e-9)
    assert lower["source_run_id"] == intl["run_id"]


@LOCAL
def test_a_rescored_run_is_reported_and_keeps_boards_and_links_whole(stored, write_lines):
    warehouse, source = stored
    other = [h.replace("e", "a") for h in HYPS]
    warehouse.run("ingest", "--testset", "ts", "--hyp", write_lines("other.txt", other),
                  "--model-slug", "m2")  # fmt: skip
    formed = warehouse.run("leaderboard", "--clusters", "--store", "--n-bootstrap", "100")
    assert formed.exit_code == 0, formed.output
    [derived] = json.loads(warehouse.run("rescore", source, "--tokenize", "intl", "--json").stdout)
    report = warehouse.run("report", derived["run_id"], "--json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["run"]["run_id"] == derived["run_id"]
    # A re-scoring beside the board's runs does not make its stored board stale.
    assert warehouse.sql("SELECT count(*) FROM run_tie_groups") == [(2,)]
    # Replacing the source keeps its re-scorings' links: the board still lists it once.
    again = warehouse.run("ingest", "--testset", "ts", "--hyp", write_lines("hyp3.txt", HYPS),
                          "--model-slug", "m", "--replace")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert warehouse.sql("SELECT source_run_id FROM run_rescores") == [(source,)]
    listed = warehouse.sql("SELECT run_id FROM leaderboard WHERE model_slug = 'm'")
    assert listed == [(source,)]


@LOCAL
def test_human_judgments_name_runs_as_ingested_after_a_rescore(warehouse, tmp_path):
    from tests.mqm import write_mqm

    mqm = write_mqm(tmp_path / "mqm.tsv")
    made = warehouse.run("ingest", "--mqm", mqm, "--reference-system", "ref", "--testset", "t")
    assert made.exit_code == 0, made.output
    assert warehouse.run("rescore", "--all", "--tokenize", "intl").exit_code == 0
    added = warehouse.run("human", "add", mqm, "--testset", "t", "--name", "again",
                          "--skip-system", "ref", "--json")  # fmt: skip
    assert added.exit_code == 0, added.output
    judged = warehouse.sql(
        "SELECT count(DISTINCT run_id) FROM human_judgments WHERE run_id IN "
        "(SELECT run_id FROM run_rescores)"
    )
    assert judged == [(0,)]
