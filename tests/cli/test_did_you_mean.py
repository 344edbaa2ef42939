"""A misspelled run, model or test set is refused with the stored names it may mean, in every
command that names one, on a file and on a lake."""

from __future__ import annotations

from tests.backends import Warehouse

# Each command, and what it says of the misspelled name.
MISSPELLED = [
    (["report", "demo-smal"], "unknown run 'demo-smal' (did you mean 'demo-small'?)"),
    (["report", "demo-small/few-shto"], "(did you mean 'demo-small/few-shot'?)"),
    (["runs", "show", "533ccbc78efec86c"], "(did you mean '533ccbc78efec86b'?)"),
    (["compare", "demo-larg", "demo-small/few-shot"], "(did you mean 'demo-large'?)"),
    (["export", "demo-lareg"], "(did you mean 'demo-large'?)"),
    (["leaderboard", "--testset", "demo-tst"],
     "unknown test set 'demo-tst' (did you mean 'demo-test'?)"),
    (["human", "list", "--testset", "demo-tset"], "(did you mean 'demo-test'?)"),
    (["runs", "list", "--model-slug", "demo-larg"],
     "unknown model 'demo-larg' (did you mean 'demo-large'?)"),
    (["regressions", "--model-slug", "dmeo-small"], "(did you mean 'demo-small'?)"),
    (["report", "demo-large", "--testset", "demotest"], "(did you mean 'demo-test'?)"),
    (["corpus", "show", "demo-trian"], "(did you mean 'demo-train'?)"),
    (["testset", "show", "demo-tes"], "(did you mean 'demo-test'?)"),
]  # fmt: skip


def test_a_misspelled_name_is_refused_with_what_it_may_mean(demo_warehouse: Warehouse):
    before = demo_warehouse.tables()
    for args, said in MISSPELLED:
        result = demo_warehouse.run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert said in result.stderr, (args, result.stderr)
    assert demo_warehouse.tables() == before


def test_a_name_far_from_every_stored_one_gets_no_guess(demo_warehouse: Warehouse):
    result = demo_warehouse.run("report", "zzzzzzzz")
    assert result.exit_code == 2 and "unknown run 'zzzzzzzz'" in result.stderr
    assert "did you mean" not in result.stderr
