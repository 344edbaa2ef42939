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
