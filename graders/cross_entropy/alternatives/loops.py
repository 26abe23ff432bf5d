import math

import numpy as np


def cross_entropy(logits, targets, ignore_index=-100):
    # one position at a time in plain Python; the loss is a Python float
    z = np.asarray(logits, dtype=np.float64)
    V = z.shape[-1]
    rows = z.reshape(-1, V).tolist()
    ids = [int(i) for i in np.asarray(targets).reshape(-1)]
    used = [p for p, i in enumerate(ids) if i != ignore_index]
    for p in used:
        if not 0 <= ids[p] < V:
            raise ValueError(f"target {ids[p]} at position {p} is not a class of {V}")
    if not used:
        raise ValueError("no position to average over")
    grad = np.zeros((len(rows), V))
    total = 0.0
    for p in used:
        row, m = rows[p], max(rows[p])
        s = math.fsum(math.exp(v - m) for v in row)
        total += m + math.log(s) - row[ids[p]]
        for j, v in enumerate(row):
            grad[p, j] = (math.exp(v - m) / s - (j == ids[p])) / len(used)
    return total / len(used), grad.reshape(z.shape)
