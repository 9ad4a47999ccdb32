"""unilab play on a depth-camera policy: the policy runs from frames rendered in plain MuJoCo, and the film shows them."""

from __future__ import annotations

import numpy as np

from trainers.play.depth_view import depth_to_grey, window_depth_overlay, with_depth_inset


def test_grey_levels_by_hand():
    np.testing.assert_array_equal(depth_to_grey(np.array([0.5, 1.0, 1.5, 2.5, 3.0, 0.0]), 0.5, 2.5), [255, 191, 128, 0, 0, 0])


def test_the_inset_sits_top_right_with_a_border_and_leaves_the_rest():
    frame = np.full((60, 80, 3), 7, np.uint8)
    depth = np.array([[0.1, 2.0], [2.0, 0.1]]).ravel()
    out = with_depth_inset(frame, depth, 2, 2, 0.1, 2.0)
    scale = int(0.3 * 80) // 2  # 12 pixels a depth pixel
    top, left = 2, 80 - 2 * scale - 2
    assert out[top, left, 0] == 255 and out[top, left + scale, 0] == 0  # near bright, far dark, scaled by whole pixels
    assert out[top + scale, left, 0] == 0 and out[top + 2 * scale - 1, left + 2 * scale - 1, 0] == 255
    assert (out[0, left - 2:, :] == 255).all()  # the white border
    assert (out[:, : left - 2] == 7).all() and (out[top + 2 * scale + 2:] == 7).all()  # the film elsewhere untouched
    assert (frame == 7).all()  # the frame given is not written into


def test_the_window_overlay_sits_bottom_right_in_a_white_border():
    from types import SimpleNamespace

    camera = SimpleNamespace(group="depth", height=2, width=2, near=0.1, far=2.0)
    groups = [SimpleNamespace(name="state", start=0, stop=3), SimpleNamespace(name="depth", start=3, stop=7)]
    spec = SimpleNamespace(camera=camera, observation=SimpleNamespace(groups=groups))
    obs = np.array([9.0, 9.0, 9.0, 0.1, 2.0, 2.0, 0.1])
    rect, image = window_depth_overlay(spec, obs, 600, 800)
    scale = int(0.3 * 800) // 2  # 120 window pixels a depth pixel
    assert (rect.width, rect.height) == (2 * scale + 4, 2 * scale + 4) == image.shape[1::-1]
    assert (rect.left, rect.bottom) == (800 - rect.width, 0)  # OpenGL's origin: the window's bottom-left corner
    assert (image[0] == 255).all() and (image[:, -1] == 255).all()  # the border
    assert image[2, 2, 0] == 255 and image[2, 2 + scale, 0] == 0 and image[2 + scale, 2, 0] == 0  # near bright, far dark
    assert window_depth_overlay(spec, None, 600, 800) is None  # no observation yet
    assert window_depth_overlay(SimpleNamespace(camera=None), obs, 600, 800) is None
