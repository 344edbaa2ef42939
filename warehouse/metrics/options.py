"""The options of the surface metrics (sacrebleu's, recorded in every signature) and their
choices: the vocabulary the command line and the handle share, without the metrics' code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from warehouse.errors import UsageError

if TYPE_CHECKING:  # sacrebleu is imported on first use: 13a BLEU, chrF++ and TER are native
    from sacrebleu.metrics import BLEU


TOKENIZERS = ("13a", "intl", "char", "none", "zh", "ja-mecab", "ko-mecab")
CHRF_WORD_ORDERS = (0, 2)  # chrF and chrF++


@dataclass(frozen=True)
class MetricOptions:
    """How the surface statistics are computed (sacrebleu's options; all recorded in the
    signatures): BLEU tokenizer, lowercasing of BLEU and chrF input, chrF word order (2 =
    chrF++, 0 = chrF), and whether TER is computed."""

    tokenize: str = "13a"
    lowercase: bool = False
    chrf_word_order: int = 2
    ter: bool = True

    def __post_init__(self) -> None:
        if self.tokenize not in TOKENIZERS:
            raise UsageError(
                f"--tokenize: expected one of {', '.join(TOKENIZERS)}, got {self.tokenize!r}"
            )
        if self.chrf_word_order not in CHRF_WORD_ORDERS:
            raise UsageError(
                f"--chrf-word-order: expected 0 (chrF) or 2 (chrF++), got {self.chrf_word_order}"
            )

    def bleu(self) -> BLEU:
        """sacrebleu's BLEU with these options (a missing tokenizer package is a usage error)."""
        from sacrebleu.metrics import BLEU

        try:
            return BLEU(tokenize=self.tokenize, lowercase=self.lowercase)
        except (ImportError, RuntimeError, OSError) as exc:
            reason = " ".join(str(exc).split())  # sacrebleu's message spans several lines
            raise UsageError(
                f"--tokenize {self.tokenize}: its tokenizer cannot be loaded ({reason}); install "
                "sacrebleu's extra for it (e.g. `pip install 'sacrebleu[ja]'`/`[ko]`)"
            ) from None

    def sacrebleu_metrics(self) -> dict[str, Any]:
        """The sacrebleu metric objects behind the stored statistics, by short name."""
        from sacrebleu.metrics import CHRF, TER

        out: dict[str, Any] = {
            "bleu": self.bleu(),
            "chrf": CHRF(word_order=self.chrf_word_order, lowercase=self.lowercase),
        }
        if self.ter:
            out["ter"] = TER()
        return out


DEFAULT_OPTIONS = MetricOptions()
