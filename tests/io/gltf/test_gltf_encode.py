"""The compact encoding's basis size and error, against the whole residual formed per k."""

import numpy as np
import pytest

from neurok_cli.io.encoding import encode


def _brute(disp: np.ndarray, k: int) -> float:
    t, n, _ = disp.shape
    a = disp.reshape(t, 3 * n)
    lam, u = np.linalg.eigh(a @ a.T)
    u = u[:, ::-1]
    r = (a - u[:, :k] @ (u[:, :k].T @ a)).reshape(t, n, 3)
    return float(np.sqrt((r * r).sum(-1)).max())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compact_basis_is_the_smallest_within_tolerance(seed):
    rng = np.random.default_rng(seed)
    t, n = 40, 3000
    modes = rng.normal(size=(12, n, 3)) * (0.5 ** np.arange(12))[:, None, None]
    disp = np.einsum("tk,kni->tni", rng.normal(size=(t, 12)), modes)
    disp += 1e-4 * rng.normal(size=disp.shape)
    tol = 0.02 * float(np.abs(disp).max())
    bases, weights, err = encode(disp, encoding="compact", tolerance=tol, max_targets=200)
    k = len(bases)
    assert err == pytest.approx(_brute(disp, k), rel=1e-9)
    assert err <= tol < _brute(disp, k - 1)
    assert np.abs(weights @ bases.reshape(k, -1) - disp.reshape(t, -1)).max() <= err * 1.001
