"""The compiled extension: it loads, a version mismatch with the Python package is refused, its
stub describes it, and numeric data crosses as buffers."""

from __future__ import annotations

import ast
import importlib
import inspect
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import warehouse
import warehouse.native
from warehouse import _native
from warehouse.errors import NativeModuleError
from warehouse.exposure.config import SearchSettings


def test_native_module_version_matches_package():
    assert warehouse.native.NATIVE_VERSION == warehouse.__version__ == _native.__version__


def test_version_mismatch_is_refused_at_import(monkeypatch):
    monkeypatch.setattr(_native, "__version__", "0.0.0-stale")
    with pytest.raises(NativeModuleError, match=r"0\.0\.0-stale does not match tame-wh"):
        importlib.reload(warehouse.native)
    monkeypatch.undo()
    importlib.reload(warehouse.native)
    assert warehouse.__version__ == warehouse.native.NATIVE_VERSION


# The stub describes the extension exactly: the same functions, class members, parameter names
# and defaults (the binding has no tuning defaults; those live in Python).

STUB = Path(warehouse.__file__).with_name("_native.pyi")
EMPTY = object()  # no default


def _stub_signatures(body: list[ast.stmt]) -> dict[str, list[tuple[str, object]]]:
    """Name → [(parameter, default or EMPTY)] of the functions in a stub body."""
    out = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            args = node.args.args
            defaults = [EMPTY] * (len(args) - len(node.args.defaults)) + [
                ast.literal_eval(d) for d in node.args.defaults
            ]
            out[node.name] = [
                (a.arg, d)
                for a, d in zip(args, defaults, strict=True)
                if a.arg not in ("self", "cls")
            ]
    return out


def _runtime_signature(function: object) -> list[tuple[str, object]]:
    params = inspect.signature(function).parameters.values()
    return [
        (p.name, EMPTY if p.default is p.empty else p.default) for p in params if p.name != "self"
    ]


def test_stub_lists_every_function_with_its_parameters_and_defaults():
    tree = ast.parse(STUB.read_text())
    functions = _stub_signatures(tree.body)
    public = {n for n in dir(_native) if not n.startswith("_")}
    # the stub's other classes are TypedDicts
    assert public == {
        *functions, *CLASSES, "IndexFileError", "INDEX_FORMAT_VERSION", "SUFFIX_FORMAT_VERSION",
        "MAX_SHARD_BYTES",
    }  # fmt: skip
    assert issubclass(_native.IndexFileError, ValueError)
    assert isinstance(_native.INDEX_FORMAT_VERSION, int)
    for name, params in functions.items():
        assert _runtime_signature(getattr(_native, name)) == params, name


CLASSES = ("RetrievalIndex", "SubstringIndex", "MinHashIndex")


@pytest.mark.parametrize("name", CLASSES)
def test_stub_describes_each_native_class(name):
    [cls] = [
        n
        for n in ast.parse(STUB.read_text()).body
        if isinstance(n, ast.ClassDef) and n.name == name
    ]
    members = _stub_signatures(cls.body)
    index = getattr(_native, name)
    runtime = {n for n in vars(index) if not n.startswith("_")}
    assert runtime == set(members) - {"__new__"}
    if "__new__" in members:
        assert members.pop("__new__") == _runtime_signature(index)
    for member, params in members.items():
        if isinstance(vars(index)[member], types.GetSetDescriptorType):  # a property
            assert params == [], member
        else:
            assert _runtime_signature(getattr(index, member)) == params, member


# Resampling reads numpy arrays in place and writes into the caller's array.


def test_resample_sums_write_into_the_output_array():
    rng = np.random.default_rng(1)
    stats = rng.integers(0, 50, size=(30, 9), dtype=np.int64)
    indices = rng.integers(0, 30, size=(7, 30), dtype=np.int64)
    out = np.full((7, 9), -1, dtype=np.int64)
    assert _native.resample_sums_i64(stats, indices, out) is None
    assert np.array_equal(out, stats[indices].sum(axis=1))
    values = rng.random((30, 2))
    sums = np.empty((7, 2))
    _native.resample_sums_f64(values, indices, sums)
    want = np.zeros((7, 2))
    for r in range(7):
        for i in indices[r]:
            want[r] += values[i]  # index order, as the kernel adds
    assert np.array_equal(sums, want)


def _resample_arguments(**change: Any) -> tuple[Any, Any, Any]:
    arrays = {
        "stats": np.ones((4, 3), dtype=np.int64),
        "indices": np.zeros((2, 4), dtype=np.int64),
        "out": np.empty((2, 3), dtype=np.int64),
    }
    arrays.update(change)
    return arrays["stats"], arrays["indices"], arrays["out"]


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"stats": [[1, 2, 3]]}, "stats must be a numpy.ndarray"),
        ({"stats": np.ones((4, 3), dtype=np.int32)}, "stats must hold i64"),
        ({"indices": np.zeros((2, 4), dtype=np.float64)}, "indices must hold i64"),
        ({"stats": np.ones(12, dtype=np.int64)}, "two-dimensional"),
        ({"stats": np.ones((3, 4), dtype=np.int64).T}, "stats must be C-contiguous"),
        ({"out": np.empty((3, 2), dtype=np.int64)}, r"out must have shape \(2, 3\)"),
        ({"out": _readonly(np.empty((2, 3), dtype=np.int64))}, "writable"),
        ({"indices": np.full((2, 4), 4, dtype=np.int64)}, "outside 0..4"),
    ],
)
def test_resample_sums_check_their_arrays(change, message):
    with pytest.raises(ValueError, match=message):
        _native.resample_sums_i64(*_resample_arguments(**change))


def test_resample_sums_refuse_an_output_sharing_memory_with_an_input():
    both = np.zeros((2, 3), dtype=np.int64)
    with pytest.raises(ValueError, match="share memory"):
        _native.resample_sums_i64(both, np.zeros((2, 2), dtype=np.int64), both)


# Searches return Arrow-layout buffers.


def test_search_buffers_have_arrow_layout():
    index = _native.RetrievalIndex(["abcd", "wxyz"], ["el", "la"], [3, 4, 5])
    queries = ["abcd", "zzzz", "abcx", "wxyz", "", "qq", "abcd", "wxy", "abc"]
    got = index.search_source(queries, SearchSettings())
    n = len(queries)
    assert len(got["exposure"]) == 8 * n and len(got["nn"]) == 8 * n
    assert len(got["nn_valid"]) == len(got["exact"]) == 2  # ceil(9 / 8) bitmap bytes
    nn = np.frombuffer(got["nn"], dtype=np.int64)
    valid = np.unpackbits(np.frombuffer(got["nn_valid"], np.uint8), bitorder="little")[:n]
    exact = np.unpackbits(np.frombuffer(got["exact"], np.uint8), bitorder="little")[:n]
    assert nn.tolist() == [0, 0, 0, 1, 0, 0, 0, 1, 0]  # 0 where there is no neighbour
    assert valid.tolist() == [1, 0, 1, 1, 0, 0, 1, 1, 1]
    assert exact.tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0]
    assert np.frombuffer(got["exposure"], dtype=np.float64)[[0, 1]].tolist() == [1.0, 0.0]
    target = index.search_target([["la", "el"], ["xx"]], SearchSettings())
    assert np.frombuffer(target["ref_idx"], dtype=np.int32).tolist() == [1, 0]
    assert target["ref_idx_valid"] == bytes([0b01])
    assert set(index.audit(["abcd"], [["el"]], SearchSettings("fast", 8, 64))) == {
        "source",
        "target",
        "pair",
        "stats",
    }
