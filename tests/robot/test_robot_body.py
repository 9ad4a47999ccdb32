"""Which body a policy was trained on: a Go1 policy is refused on a real Go2 (the two share joint names)."""

from __future__ import annotations

from trainers.cli import main
from unilab_robot.deploy import load_spec
from unilab_robot.motors import ROBOTS, body_mismatch

GO1 = "policies/go1_joystick_real"


def test_the_root_body_tells_the_go1_from_the_go2():
    go1 = load_spec(f"{GO1}/deploy_spec.json")
    line = body_mismatch(ROBOTS["go2"], go1.model.root_body, go1.task.id)
    assert line == ("this policy was trained on UniLab/Go1Joystick-v0, a body whose root is 'trunk', not the go2's "
                    "('base'): another body's policy falls on this one; train on UniLab/Go2Joystick-v0")
    assert body_mismatch(ROBOTS["go2"], "base", "UniLab/Go2Joystick-v0") is None
    g1 = load_spec("policies/g1_joystick_real/deploy_spec.json")
    assert body_mismatch(ROBOTS["g1"], g1.model.root_body, g1.task.id) is None


def test_robot_run_refuses_a_go1_policy_on_a_robot_interface_before_anything_is_sent(capsys):
    # "robot0" is no interface of this machine: the refusal comes before a DDS participant exists
    assert main(["robot", "run", GO1, "--interface", "robot0", "--duration", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not the go2's ('base')" in err[0] and err[0].endswith("(--force-body runs it anyway)")
