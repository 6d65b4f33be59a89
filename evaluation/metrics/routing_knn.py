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


def knn_probs(pool: Pool, questions: Sequence[str], train: Sequence[int], test: Sequence[int],
              k: int = K) -> np.ndarray:
    """One-hot picks for the ``test`` rows; ``questions`` is aligned with ``pool.samples``."""
    # Imported here, not at the top: the URL configuration reaches this module, and scikit-learn
    # takes 1-5 s to import, which every web process, worker and manage.py command paid at start.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    p = np.zeros((len(test), len(pool.models)))
    if not len(test) or not pool.models:
        return p
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
    nn = NearestNeighbors(n_neighbors=min(k, len(train)), metric="cosine").fit(x_train)
    _, neighbours = nn.kneighbors(vectorizer.transform([questions[i] or "" for i in test]))
    train_rows = np.asarray(train)
    for i, idx in enumerate(neighbours):
        rows = train_rows[idx]
        hits = pool.correct[rows].sum(axis=0)
        spend = pool.cost[rows].mean(axis=0)
        p[i, int(np.lexsort((order, spend, -hits))[0])] = 1.0
    return p
