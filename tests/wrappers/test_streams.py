"""RNG streams by name: the recorded wrappers keep their tags, a new name gets its own stream."""

import numpy as np

from unilab_envs.core.rng import RECORDED_STREAMS, seed_streams, stream_id
from wrappers._base import Sim2RealWrapper
from wrappers.sim2real import SECTIONS


def test_every_profile_section_keeps_the_tag_its_numbers_were_recorded_with():
    # the hand-assigned tags before streams were named (wrappers/*.py, 2026-12-05)
    recorded = {"observation_noise": 10, "action_noise": 11, "imu_bias_drift": 12, "action_latency": 13,
                "observation_latency": 14, "packet_loss": 15, "motor_strength": 17, "domain_randomization": 18,
                "random_push": 19, "safety": 20}
    assert {name: stream_id(cls.SECTION) for name, cls in SECTIONS.items() if name in recorded} == recorded
    assert all(stream_id(name) >= 1 << 63 for name in SECTIONS if name not in recorded)  # later sections: hashed names
    assert stream_id("packet_loss/actions") == 16 and stream_id("task") == 0 and stream_id("episode_start_spread") == 1


def test_a_new_name_gets_a_stream_of_its_own_the_same_every_time():
    a, b = stream_id("foot_contact_noise"), stream_id("camera_depth_noise")
    assert a == stream_id("foot_contact_noise") and a != b
    assert min(a, b) >= 1 << 63 and not {a, b} & set(RECORDED_STREAMS.values())
    seeds = np.arange(4)
    assert not np.array_equal(seed_streams(seeds, a), seed_streams(seeds, b))


def test_a_user_wrapper_without_a_section_is_named_by_its_class():
    class MyFootNoise(Sim2RealWrapper):
        pass

    class MySection(Sim2RealWrapper):
        SECTION = "my_section"

    assert MyFootNoise.stream.fget(object.__new__(MyFootNoise)) == stream_id("MyFootNoise")
    assert MySection.stream.fget(object.__new__(MySection)) == stream_id("my_section")
