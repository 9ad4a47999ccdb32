"""What every learner shares: one run lifecycle, the learner registry's contract, checkpoint IO, logs, plots.

=====================  ===================================================================================
module                 what
=====================  ===================================================================================
``lifecycle``          one run lifecycle: folder claim, config and run kind written, start line, cadence,
                       stopped line, curve, closing lines (PPO, SAC / TD3, distillation, SB3)
``progress``           the progress bar labelled with the task, or periodic lines
``signals``            SIGINT / SIGTERM / SIGHUP: :class:`~trainers.common.signals.StopRequest`, exit status
``streams``            a closed stdout / stderr falls back to ``<run>/train.log``
``run_folder``         the rule that keeps a run from being overwritten; a bad ``--out`` in one line
``runs``               what a path is: the run kind (``run.yaml``), legacy folders recognized in one place
``learners``           the learner registry's contract (the listing: :mod:`trainers.learners`)
``atomic``             atomic file writes
``checkpoint``         checkpoint files: atomic, ``weights_only`` loading, format and version checks
``logging``            ``progress.csv`` and TensorBoard
``plotting``           the learning curve
``stall``              the line that says a run stopped learning
``mixed_precision``    where bf16 autocast runs and what stays float32
``device``             ``auto`` / ``cpu`` / ``cuda`` resolution
``denormals``          flushing denormal floats in the learner
``envs``               vector envs for every learner
``evaluation``         deterministic episodes, one evaluator
``terrain_eval``       terrain-level evaluation plans
``profile_label``      how a sim-to-real profile is named in lines
``onnx_export``        ONNX graphs
``deploy_export``      the deploy spec beside an exported policy
``precision``          fp16 / int8 exports checked against fp32
``ship``               ``unilab ship``: a run as a policy folder
``video``              filming an episode
=====================  ===================================================================================
"""
