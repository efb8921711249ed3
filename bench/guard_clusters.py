"""Build guardrails/learned_words.bin: which cluster of meaning each English word falls in, for the learned score.

    python bench/guard_clusters.py   # needs wordllama (a core dependency) and scikit-learn (the train extra)

The learned score (guardrails/learned.py) knows the words of the commands it was trained on; a vendor's verb it
has never seen (`quiesce`, `evict`, `decommission`) says nothing to it. Each word of WordLlama's vocabulary (the
whole-word pieces of its tokenizer, 3 letters or more) is embedded with WordLlama and the vectors are clustered
three times (256, 1,024 and 3,000 clusters, k-means, fixed seed), so `halt`, `pause`, `stop` and `suspend` share a
cluster a trained weight sits on. The table is written as zlib-compressed text, one `word c1 c2 c3` line each;
guardrails reads it in plain Python. Retrain (bench/guard_train.py) after rebuilding it: the weights are tied to
the table by its checksum.
"""

from __future__ import annotations

import sys
import time
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from guardrails.learned import CLUSTERS, WORDS  # noqa: E402
from retrieval.embed import WordLlamaEmbedder  # noqa: E402


def vocabulary(tokenizer) -> list[str]:
    """The whole-word pieces of the tokenizer (`▁halt`), lower-cased, ASCII letters only, 3 letters or more."""
    return sorted({piece[1:].lower() for piece in tokenizer.get_vocab()
                   if piece.startswith("▁") and piece[1:].isascii() and piece[1:].isalpha() and len(piece) >= 4})


def main() -> None:
    from sklearn.cluster import MiniBatchKMeans

    start = time.perf_counter()
    model = WordLlamaEmbedder()._model
    words = vocabulary(model.tokenizer)
    vectors = model.embed(words)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    labels = [MiniBatchKMeans(n_clusters=k, random_state=0, n_init=3, batch_size=4096).fit(vectors).labels_
              for k in CLUSTERS]
    lines = [" ".join([word, *(str(int(column[i])) for column in labels)]) for i, word in enumerate(words)]
    WORDS.write_bytes(zlib.compress(("\n".join(lines) + "\n").encode(), 9))
    print(f"{len(words)} words in {'/'.join(map(str, CLUSTERS))} clusters -> {WORDS.relative_to(REPO)} "
          f"({WORDS.stat().st_size // 1024} KB), {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
