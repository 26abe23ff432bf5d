import numpy as np


def softmax(z, axis=-1):
    # log-softmax first: z - logsumexp(z), with the max pulled out of the log
    m = np.max(z, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=axis, keepdims=True))
    return np.exp(z - lse)
