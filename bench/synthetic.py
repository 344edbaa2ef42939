"""Synthetic parallel text for the benchmarks: templated ~60-character sentence pairs."""

from __future__ import annotations

import random
from pathlib import Path

_WORDS_SRC = (
    "river",
    "market",
    "teacher",
    "window",
    "bread",
    "morning",
    "letter",
    "ticket",
    "garden",
    "station",
    "doctor",
    "city",
    "winter",
    "summer",
    "blanket",
    "newspaper",
    "bicycle",
    "village",
    "mountain",
    "kitchen",
    "question",
    "answer",
)
_WORDS_TGT = (
    "río",
    "mercado",
    "maestra",
    "ventana",
    "pan",
    "mañana",
    "carta",
    "boleto",
    "jardín",
    "estación",
    "médico",
    "ciudad",
    "invierno",
    "verano",
    "manta",
    "periódico",
    "bicicleta",
    "pueblo",
    "montaña",
    "cocina",
    "pregunta",
    "respuesta",
)
_VERBS = [("sees", "ve"), ("buys", "compra"), ("needs", "necesita"), ("finds", "encuentra")]


def sentence_pair(rng: random.Random) -> tuple[str, str]:
    """One source/target pair of roughly 60 characters."""
    a, b, c = (rng.randrange(len(_WORDS_SRC)) for _ in range(3))
    verb_en, verb_es = _VERBS[rng.randrange(len(_VERBS))]
    number = rng.randrange(10_000)
    src = (
        f"The {_WORDS_SRC[a]} {verb_en} the {_WORDS_SRC[b]} near the {_WORDS_SRC[c]} no. {number}."
    )
    tgt = f"El {_WORDS_TGT[a]} {verb_es} el {_WORDS_TGT[b]} cerca del {_WORDS_TGT[c]} n.º {number}."
    return src, tgt


def write_parallel(folder: Path, n: int, seed: int = 1) -> tuple[Path, Path]:
    """Write `n` aligned pairs to folder/src.txt and folder/tgt.txt."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    src_path, tgt_path = folder / "src.txt", folder / "tgt.txt"
    with open(src_path, "w", encoding="utf-8") as src, open(tgt_path, "w", encoding="utf-8") as tgt:
        for _ in range(n):
            s, t = sentence_pair(rng)
            src.write(s + "\n")
            tgt.write(t + "\n")
    return src_path, tgt_path


def _near_copy(text: str, rng: random.Random) -> str:
    """The sentence with one word replaced."""
    words = text.split()
    k = rng.randrange(len(words))
    words[k] = rng.choice(_WORDS_SRC if rng.random() < 0.5 else _WORDS_TGT)
    return " ".join(words)


def write_exposure_corpus(
    folder: Path, n_train: int, n_test: int, seed: int = 3, mix: str = "unrelated"
) -> dict[str, Path]:
    """Training pairs and a test set: 10% exact copies, 30% near copies, 60% other sentences.

    `mix="unrelated"`: the others come from a different template sharing only content words with
    training (low best similarity, the hard case for pruning); `mix="unseen"`: 20% exact copies,
    25% near copies and 55% new sentences of the training template.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    train = [sentence_pair(rng) for _ in range(n_train)]
    exact_share, near_share = (0.1, 0.3) if mix == "unrelated" else (0.2, 0.25)
    test: list[tuple[str, str]] = []
    for i in range(n_test):
        position = (i % 20) / 20
        if position < exact_share:
            test.append(train[rng.randrange(n_train)])
        elif position < exact_share + near_share:
            src, tgt = train[rng.randrange(n_train)]
            test.append((_near_copy(src, rng), _near_copy(tgt, rng)))
        elif mix == "unseen":
            test.append(sentence_pair(rng))
        else:
            words = rng.sample(_WORDS_SRC, 6)
            targets = rng.sample(_WORDS_TGT, 6)
            test.append(
                (
                    f"Yesterday {' and '.join(words)} were seen.",
                    f"Ayer se vieron {' y '.join(targets)}.",
                )
            )
    paths = {
        name: folder / f"{name}.txt" for name in ("train_src", "train_tgt", "test_src", "test_ref")
    }
    for name, rows, side in (
        ("train_src", train, 0),
        ("train_tgt", train, 1),
        ("test_src", test, 0),
        ("test_ref", test, 1),
    ):
        paths[name].write_text("".join(row[side] + "\n" for row in rows), encoding="utf-8")
    return paths
