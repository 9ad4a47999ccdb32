"""The policy ``unilab play`` runs, found with the training stack's knowledge of tasks.

The finding and loading is the robot side's (:func:`unilab_robot.policy.find_policy`, :class:`OnnxPolicy`);
this module gives it the two hooks that ask a task's code: a run on a task without a deploy spec is told so
(rather than to re-export), and a spec of a task outside this package (id ``"module:Id"``) whose observation
has groups of the task's own gets their builders from that module's task declarations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from unilab_robot.deploy import DeploySpec, SpecError
from unilab_robot.policy import PolicyBundle
from unilab_robot.policy import find_policy as find_files


def find_policy(path: str | Path, spec_path: str | Path | None = None) -> PolicyBundle:
    """The ``policy.onnx`` and deploy spec of a run folder (or an ``.onnx`` file), with the builders of the spec's
    task's own groups: :func:`unilab_robot.policy.find_policy` with this module's hooks; :class:`PlayError` if absent."""
    return find_files(path, spec_path, check_task=_require_deployable_task, group_builders=_task_group_builders)


def _task_group_builders(spec: DeploySpec) -> dict[str, Callable]:
    """A spec of a task outside this package (id ``"module:Id"``) whose observation has groups of the task's own:
    import that module and read its tasks' declared builders (:func:`unilab_envs.deploy_spec.task_group_builders`)."""
    from unilab_envs.deploy_spec import task_group_builders
    from unilab_robot.deploy.reference import GROUP_BUILDERS

    from trainers.common.envs import import_task_module

    if ":" in spec.task.id and any(g.name not in GROUP_BUILDERS for g in spec.observation.groups):
        try:
            import_task_module(spec.task.id)
        except ValueError as e:
            raise SpecError(f"the spec's observation has groups of the task's own, whose builders its module declares: {e}") from None
        return task_group_builders(spec.task.id.partition(":")[0])
    return {}


def _require_deployable_task(folder: Path) -> None:
    """A run on a task without a deploy spec (not a UniLab task: its ONNX carries no spec) gets told so,
    rather than to re-export. Asks the task (:func:`unilab_envs.deploy_spec.deploy_spec_for`)."""
    from unilab_envs.deploy_spec import NoDeploySpec, deploy_spec_for

    from trainers.common.deploy_export import run_task
    from trainers.common.envs import import_task_module

    found = run_task(folder)
    if found is None:
        return
    try:
        import_task_module(found[0])
        deploy_spec_for(found[0], **{k: v for k, v in found[1].items() if k != "num_threads"})
    except NoDeploySpec:
        raise SpecError(f"{found[0]} has no deploy spec yet (unilab play runs tasks on unilab_envs.core.task.Task "
                        f"whose deploy_facts() says what the robot side needs): watch this policy in the training "
                        f"stack with `unilab eval {folder} --video`") from None
    except ValueError as e:  # the task's own word (its deploy_facts, an unknown group)
        raise SpecError(f"{found[0]} has no deploy spec: {e}") from None
