"""What one run of the impact engine did: :class:`ImpactStats`, counters that accumulate over calls."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ImpactStats"]


@dataclass
class ImpactStats:
    """Counters filled in by ``impact_matrices`` (pass one in as ``stats=``); they accumulate."""

    sentences: int = 0            # sentences taken from the input (skipped ones included)
    skipped: int = 0              # too long for the model: yielded None
    skipped_indices: list[int] = field(default_factory=list)
    forward_sequences: int = 0    # masked inputs run through the model
    tokens: int = 0               # real tokens in those inputs
    padded_tokens: int = 0        # tokens the lower layers computed (= tokens: batches are never padded)
    reads: int = 0                # hidden states read (piece positions)
    query_slots: int = 0          # top-layer query positions computed (fast path; rows × most reads in a row)
    attention_pairs: int = 0      # query·key pairs of a full layer (Σ rows × length²)
    query_key_pairs: int = 0      # query·key pairs of the partial top layer
    batches: int = 0
    oom_retries: int = 0
    seconds: float = 0.0
    fast_path: bool | None = None

    def summary(self) -> str:
        """One readable line: sentences, sequences, tokens/s, batches, path."""
        rate = self.tokens / self.seconds if self.seconds else 0.0
        path = {True: "fast path", False: "generic path", None: "no model run"}[self.fast_path]
        return (f"{self.sentences} sentences ({self.skipped} skipped), {self.forward_sequences} masked sequences, "
                f"{self.tokens} tokens in {self.batches} batches, {self.seconds:.1f} s ({rate:.0f} tokens/s), {path}")
