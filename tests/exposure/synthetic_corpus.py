"""Templated parallel sentences for parity and fast-mode tests: copies, near copies, unrelated."""

from __future__ import annotations

import random
from dataclasses import dataclass

SUBJECTS = [
    ("the teacher", "la maestra"),
    ("my brother", "mi hermano"),
    ("the old man", "el anciano"),
    ("our neighbour", "nuestra vecina"),
    ("the doctor", "la doctora"),
    ("a child", "un niño"),
    ("the farmer", "el granjero"),
    ("her friend", "su amiga"),
]
VERBS = [
    ("buys", "compra"),
    ("sees", "ve"),
    ("paints", "pinta"),
    ("repairs", "repara"),
    ("sells", "vende"),
    ("finds", "encuentra"),
]
OBJECTS = [
    ("a red bicycle", "una bicicleta roja"),
    ("the blue door", "la puerta azul"),
    ("some fresh bread", "pan fresco"),
    ("an old letter", "una carta vieja"),
    ("the small boat", "el barco pequeño"),
    ("a warm blanket", "una manta caliente"),
    ("the broken clock", "el reloj roto"),
]
PLACES = [
    ("near the river", "cerca del río"),
    ("in the market", "en el mercado"),
    ("at the station", "en la estación"),
    ("behind the church", "detrás de la iglesia"),
    ("in the garden", "en el jardín"),
]


@dataclass
class Corpus:
    """Training pairs and test segments with one or more references each."""

    train_src: list[str]
    train_tgt: list[str]
    test_src: list[str]
    test_refs: list[list[str]]

    def refs_by_stream(self) -> list[list[str]]:
        """References as parallel streams (stream k holds every segment's k-th reference)."""
        n_refs = len(self.test_refs[0])
        return [[refs[k] for refs in self.test_refs] for k in range(n_refs)]


def sentence(rng: random.Random) -> tuple[str, str]:
    """One templated English/Spanish pair."""
    (s_en, s_es), (v_en, v_es), (o_en, o_es), (p_en, p_es) = (
        rng.choice(SUBJECTS),
        rng.choice(VERBS),
        rng.choice(OBJECTS),
        rng.choice(PLACES),
    )
    n = rng.randrange(1000)
    en = f"{s_en.capitalize()} {v_en} {o_en} {p_en}, ticket {n}."
    es = f"{s_es.capitalize()} {v_es} {o_es} {p_es}, billete {n}."
    return en, es


def unrelated(rng: random.Random) -> str:
    """Random lowercase words unlike the templates."""
    words = ("".join(rng.choice("qwzxkvjy") for _ in range(rng.randint(3, 8))) for _ in range(5))
    return " ".join(words)


def near_copy(text: str, rng: random.Random) -> str:
    """A small edit: one character changed, a word dropped, or extra spacing and case."""
    kind = rng.randrange(3)
    if kind == 0:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice("aeiou") + text[i + 1 :]
    if kind == 1:
        words = text.split()
        del words[rng.randrange(len(words))]
        return " ".join(words)
    return "  " + text.replace(" ", "   ", 2) + " "


def make_corpus(n_train: int, n_test: int, seed: int = 7, n_refs: int = 2) -> Corpus:
    """Training pairs (with duplicate rows and unrelated pairs) and test segments of which about
    a quarter are exact copies, a quarter near copies, a third fresh template sentences and the
    rest unrelated; the second reference is a near copy of the translation."""
    rng = random.Random(seed)
    train_src, train_tgt = [], []
    for _ in range(n_train):
        roll = rng.random()
        if roll < 0.05 and train_src:
            j = rng.randrange(len(train_src))
            en, es = train_src[j], train_tgt[j]
        elif roll < 0.12:
            en, es = unrelated(rng), unrelated(rng)
        else:
            en, es = sentence(rng)
        train_src.append(en)
        train_tgt.append(es)
    test_src, test_refs = [], []
    for _ in range(n_test):
        roll = rng.random()
        if roll < 0.25:
            j = rng.randrange(n_train)
            en, es = train_src[j], train_tgt[j]
        elif roll < 0.5:
            j = rng.randrange(n_train)
            en, es = near_copy(train_src[j], rng), near_copy(train_tgt[j], rng)
        elif roll < 0.85:
            en, es = sentence(rng)
        else:
            en, es = unrelated(rng), unrelated(rng)
        refs = [es] + [near_copy(es, rng) for _ in range(n_refs - 1)]
        test_src.append(en)
        test_refs.append(refs)
    return Corpus(train_src, train_tgt, test_src, test_refs)
