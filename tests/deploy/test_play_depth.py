"""unilab play on a depth-camera policy: the policy runs from frames rendered in plain MuJoCo, and the film shows them."""

from __future__ import annotations

import numpy as np

from trainers.play.depth_view import depth_to_grey, with_depth_inset


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
