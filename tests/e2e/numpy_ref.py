"""Reference operators in numpy (float64) for the end-to-end model scripts of tests/e2e/."""
import numpy as np


def conv(x, w, b=None, pad=0):
    """2-D convolution, NCHW, stride 1, symmetric zero padding `pad`, optional bias."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y if b is None else y + b.reshape(1, m, 1, 1)
