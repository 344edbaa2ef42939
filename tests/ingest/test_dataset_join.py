"""A test report whose `dataset.id` names a registered test set with the same texts joins it
(its own entry ids aside), rather than forking a second test set; one whose texts differ gets
its own test set and a warning saying why and what to do."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parents[1] / "inputs" / "data"


def _report(tmp_path, name, hyps_file="sysA.en", refs=None):
    src = (DATA / "src.de").read_text(encoding="utf-8").splitlines()
    ref = refs or (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    hyp = (DATA / hyps_file).read_text(encoding="utf-8").splitlines()
    entries = [
        {"id": f"doc-{i}", "source": s, "expected": r, "predicted": h}
        for i, (s, r, h) in enumerate(zip(src, ref, hyp, strict=True))
    ][::-1]  # in another order than the test set
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"model_slug": name, "dataset": {"id": "wmt"}, "entries": entries}),
                    encoding="utf-8")  # fmt: skip
    return path


def test_a_report_naming_a_registered_test_set_with_its_texts_joins_it(run_cli, tmp_path):
    run_cli("testset", "add", "wmt", "--src", DATA / "src.de", "--ref", DATA / "ref.en")
    [plain] = json.loads(run_cli("ingest", "--testset", "wmt", "--hyp", DATA / "sysA.en",
                                 "--model-slug", "plain", "--json").output)  # fmt: skip
    done = run_cli("ingest", _report(tmp_path, "report"), "--json")
    assert done.exit_code == 0, done.output
    [run] = json.loads(done.stdout)
    assert (run["test_set"], run["test_set_created"]) == ("wmt", False)
    assert not [w for w in run["warnings"] if "dataset.id" in w]
    assert run["scores"] == plain["scores"]
    tests = json.loads(run_cli("testset", "list", "--json").stdout)
    assert [t["name"] for t in tests] == ["wmt"]


def test_a_report_whose_texts_differ_gets_its_own_test_set_and_says_why(run_cli, tmp_path):
    run_cli("testset", "add", "wmt", "--src", DATA / "src.de", "--ref", DATA / "ref.en")
    refs = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    refs[2] = "The weather is lovely today."
    done = run_cli("ingest", _report(tmp_path, "other", refs=refs), "--json")
    assert done.exit_code == 0, done.output
    [run] = json.loads(done.stdout)
    assert run["test_set"].startswith("wmt@") and run["test_set_created"]
    [warning] = [w for w in run["warnings"] if "dataset.id" in w]
    assert "a reference differs" in warning and "pass --testset wmt" in warning
