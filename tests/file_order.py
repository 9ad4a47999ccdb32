"""The order xdist hands test files to its workers: the heaviest first.

``--dist loadfile`` gives each worker whole files in collection order, and collection is alphabetical:
``tests/trainers`` (most of the suite's heavy files) came last, so one worker finished a long file while the
other waited. Handing the heaviest files out first (longest-processing-time-first scheduling) leaves the
light ones to fill the end. :data:`HEAVIEST_FIRST` is measured (seconds of a worker per file, the table of
docs/testing.md and the slowest tests of a fresh-clone run); a file not in it keeps its collection order after
them. Only the order of files changes: a file's tests keep theirs.
"""

from __future__ import annotations

#: test files by the seconds of a worker they take, the heaviest first (docs/testing.md)
HEAVIEST_FIRST = (
    "tests/trainers/test_shipped_policies.py",
    "tests/trainers/test_multinode.py",
    "tests/trainers/test_shipped_real_policies.py",
    "tests/trainers/test_resume_real.py",
    "tests/robot/test_identify.py",
    "tests/trainers/test_ppo_distributed.py",
    "tests/trainers/test_lifecycle.py",
    "tests/envs/test_registry.py",
    "tests/trainers/test_adapt.py",
    "tests/deploy/test_play_headless.py",
    "tests/test_examples.py",
    "tests/test_readme.py",
    "tests/robot/test_gate.py",
    "tests/envs/test_reward_terms.py",
    "tests/deploy/test_obs_groups.py",
    "tests/trainers/test_estimator_go1.py",
    "tests/test_packaging.py",
    "tests/trainers/test_offpolicy_bf16_cpu.py",
    "tests/robot/test_robot_package_install.py",
    "tests/trainers/test_offpolicy_learning.py",
    "tests/deploy/test_external_task.py",
)


def heaviest_first(items: list, nodeid_of=lambda item: item.nodeid) -> None:
    """Reorder ``items`` in place: the files of :data:`HEAVIEST_FIRST` in its order, then every other file in
    the order it came (a stable sort: each file's tests keep their order)."""
    rank = {path: i for i, path in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(nodeid_of(item).split("::", 1)[0], len(rank)))
