"""cnn_params.py OUT.npz: random weights (fixed seed) for the parameters of
tests/lit/tvm/v010_cnn_batch_norm.rly's @main but %data, for --params."""
import sys

import numpy as np

rng = np.random.default_rng(7)
np.savez(sys.argv[1],
         conv_weight=rng.standard_normal((16, 3, 3, 3)).astype(np.float32),
         bn_gamma=rng.uniform(0.5, 2, 16).astype(np.float32),
         bn_beta=rng.standard_normal(16).astype(np.float32),
         bn_moving_mean=rng.standard_normal(16).astype(np.float32),
         bn_moving_var=rng.uniform(0.5, 2, 16).astype(np.float32),
         fc_weight=rng.standard_normal((10, 16)).astype(np.float32))
