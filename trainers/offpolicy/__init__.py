"""The bundled off-policy learner: SAC, and TD3 from the same code, with its replay buffer on the learner's device.

``unilab train --algo sac|td3`` (:mod:`trainers.offpolicy.cli`): :mod:`~trainers.offpolicy.config` (the typed
config), :mod:`~trainers.offpolicy.replay` (the device buffer, n-step returns), :mod:`~trainers.offpolicy.networks`,
:mod:`~trainers.offpolicy.learner` (the updates), :mod:`~trainers.offpolicy.symmetry` (mirror augmentation of
minibatches), :mod:`~trainers.offpolicy.runner` (the loop, checkpoints, logs).
"""
