"""The learned reference router: nearest neighbours over TF-IDF of the question text.

Trained on the train split only. For a test question it finds the ``k`` most similar train
questions (cosine over TF-IDF of words) and picks the model with the most correct answers among
them; ties go to the model cheaper on those neighbours, then to the first name. It is the bar a
submitted router has to beat: anything that reads the question should do at least this well.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .routing import Pool

K = 5
CHUNK = 512  # test questions compared at once: a CHUNK x train dense block of similarities


def knn_probs(pool: Pool, questions: Sequence[str], train: Sequence[int], test: Sequence[int],
              k: int = K) -> np.ndarray:
    """One-hot picks for the ``test`` rows; ``questions`` is aligned with ``pool.samples``."""
    p = np.zeros((len(test), len(pool.models)))
    if not len(test) or not pool.models:
        return p
    # Imported here: scikit-learn takes ~3 s to import, which every web and worker process would pay at start.
    from sklearn.feature_extraction.text import TfidfVectorizer

    train_text = [questions[i] or "" for i in train]
    vectorizer = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), min_df=1)
    try:
        x_train = vectorizer.fit_transform(train_text)
    except ValueError:  # no train samples, or no words in any of them: nothing to learn from
        x_train = None
    order = np.arange(len(pool.models))
    if x_train is None:
        p[:, 0] = 1.0
        return p
    x_test = vectorizer.transform([questions[i] or "" for i in test])
    x_train_t = x_train.T.tocsr()
    k = min(k, len(train))
    train_rows = np.asarray(train)
    # TF-IDF rows are L2-normalised, so the cosine similarity is the dot product. (sklearn's
    # NearestNeighbors with metric="cosine" gave the same neighbours 5x slower on 21k x 6k questions.)
    for start in range(0, len(test), CHUNK):
        sims = (x_test[start:start + CHUNK] @ x_train_t).toarray()
        # The k most similar (argpartition is deterministic: the same questions give the same neighbours).
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < sims.shape[1] else np.argsort(-sims, axis=1)[:, :k]
        for off, idx in enumerate(top):
            rows = train_rows[idx]
            hits = pool.correct[rows].sum(axis=0)
            spend = pool.cost[rows].mean(axis=0)
            p[start + off, int(np.lexsort((order, spend, -hits))[0])] = 1.0
    return p
