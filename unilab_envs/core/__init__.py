"""The batched core: vector env, single env, per-env RNG streams, shared kernels."""
