import numpy as np


def rope(x, positions=None, base=10000.0):
    # build the block rotation matrix of every position and apply it with einsum
    *_, T, d = x.shape
    if d & 1:
        raise ValueError("rope requires an even d")
    half = d // 2
    if positions is None:
        positions = np.arange(T)
    i = np.arange(half)
    ang = np.asarray(positions, dtype=float)[:, None] * np.exp(-np.log(base) * 2 * i / d)   # (T, half)
    R = np.zeros((T, d, d))
    R[:, i, i] = np.cos(ang)
    R[:, i + half, i + half] = np.cos(ang)
    R[:, i, i + half] = -np.sin(ang)
    R[:, i + half, i] = np.sin(ang)
    return np.einsum("tij,...tj->...ti", R, x)
