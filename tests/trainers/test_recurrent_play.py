"""``unilab play`` runs a recurrent policy: the player's ONNX policy keeps its hidden state and each reset zeroes it."""

from tests.trainers.test_recurrent_deploy import gru_policy_folder


def test_play_runs_a_recurrent_policy_and_zeroes_its_state_at_each_reset(tmp_path):
    from trainers.play import Player
    from unilab_robot.policy import find_policy

    player = Player(find_policy(gru_policy_folder(tmp_path / "gru")))
    assert player.policy.state is not None and not player.policy.state.h.any()
    for _ in range(5):
        player.control_step()
    assert player.policy.state.h.any()
    player.reset()
    assert not player.policy.state.h.any()
