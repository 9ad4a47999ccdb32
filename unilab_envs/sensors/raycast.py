"""Ray intersections with MuJoCo's static geoms, in the geom's own frame, for Numba kernels.

Each ``ray_<type>(ox, oy, oz, dx, dy, dz, ...)`` takes a ray ``o + t d`` in the geom's local
frame (``d`` need not be unit length) and returns the smallest ``t >= 0`` at which it meets the
geom's surface, or ``-1.0`` for a miss: the conventions of MuJoCo's ``mj_ray``
(``src/engine/engine_ray.c``), which the tests compare against:

- a plane is the local ``z = 0`` face seen from above (a ray from below or along it misses), finite
  in x / y where ``size[0]`` / ``size[1]`` are positive;
- a sphere, a capsule (along local z, half-length ``size[1]``) and a box (half-sizes ``size``) are
  hit from outside; a ray that starts inside one hits its surface on the way out;
- a heightfield is MuJoCo's: ``nrow`` rows along local y, ``ncol`` columns along x, sample
  ``(r, c)`` at ``(-sx + 2 sx c / (ncol - 1), -sy + 2 sy r / (nrow - 1), data[r * ncol + c] * sz)``,
  each cell split into the triangles ``{(c,r), (c+1,r+1), (c+1,r)}`` and ``{(c,r), (c+1,r+1), (c,r+1)}``
  (as :func:`unilab_envs.terrain.lookup.ground_height` reads it), standing on a solid base
  ``base`` deep below ``z = 0``; a ray that enters through a side wall below the surface hits the wall.
  The cells the ray crosses are walked in order (a 2-D DDA), skipping a cell whose highest corner is
  below the ray along it, so the cost grows with the length of the ray, not the size of the field.
"""

from __future__ import annotations

import math

import numba as nb

MISS = -1.0
_EPS = 1e-12


@nb.njit(inline="always", cache=True)
def ray_plane(ox, oy, oz, dx, dy, dz, size_x, size_y):
    if dz >= -_EPS or oz < 0.0:
        return MISS
    t = -oz / dz
    x = ox + t * dx
    y = oy + t * dy
    if (size_x > 0.0 and abs(x) > size_x) or (size_y > 0.0 and abs(y) > size_y):
        return MISS
    return t


@nb.njit(inline="always", cache=True)
def _quadratic(a, b, c):
    """The smallest ``t >= 0`` of ``a t^2 + 2 b t + c = 0`` (``a > 0``), or MISS."""
    disc = b * b - a * c
    if disc < 0.0:
        return MISS
    root = math.sqrt(disc)
    t = (-b - root) / a
    if t >= 0.0:
        return t
    t = (-b + root) / a
    return t if t >= 0.0 else MISS


@nb.njit(inline="always", cache=True)
def ray_sphere(ox, oy, oz, dx, dy, dz, radius):
    return _quadratic(dx * dx + dy * dy + dz * dz, ox * dx + oy * dy + oz * dz, ox * ox + oy * oy + oz * oz - radius * radius)


@nb.njit(inline="always", cache=True)
def _nearer(best, t):
    if t >= 0.0 and (best < 0.0 or t < best):
        return t
    return best


@nb.njit(inline="always", cache=True)
def ray_capsule(ox, oy, oz, dx, dy, dz, radius, half_length):
    best = MISS
    a = dx * dx + dy * dy
    if a > _EPS:  # the cylinder's side, within its length
        t = _quadratic(a, ox * dx + oy * dy, ox * ox + oy * oy - radius * radius)
        if t >= 0.0 and abs(oz + t * dz) <= half_length:
            best = t
    for cap in (-half_length, half_length):
        best = _nearer(best, ray_sphere(ox, oy, oz - cap, dx, dy, dz, radius))
    return best


@nb.njit(inline="always", cache=True)
def _slab(o, d, low, high, t_in, t_out):
    """The ray's ``[t_in, t_out]`` narrowed to ``low <= o + t d <= high`` (empty: ``t_in > t_out``)."""
    if abs(d) < _EPS:
        if o < low or o > high:
            return 1.0, 0.0
        return t_in, t_out
    t0 = (low - o) / d
    t1 = (high - o) / d
    if t0 > t1:
        t0, t1 = t1, t0
    return max(t_in, t0), min(t_out, t1)


@nb.njit(inline="always", cache=True)
def ray_box(ox, oy, oz, dx, dy, dz, hx, hy, hz):
    t_in, t_out = _slab(ox, dx, -hx, hx, -math.inf, math.inf)
    t_in, t_out = _slab(oy, dy, -hy, hy, t_in, t_out)
    t_in, t_out = _slab(oz, dz, -hz, hz, t_in, t_out)
    if t_in > t_out or t_out < 0.0:
        return MISS
    return t_in if t_in >= 0.0 else t_out


@nb.njit(inline="always", cache=True)
def _height(data, adr, ncol, r, c, sz):
    return data[adr + r * ncol + c] * sz


@nb.njit(inline="always", cache=True)
def _surface(data, adr, nrow, ncol, sx, sy, sz, x, y):
    """The heightfield's surface height at local ``(x, y)`` inside its rectangle."""
    fx = min(max((x + sx) * (ncol - 1) / (2.0 * sx), 0.0), ncol - 1.0)
    fy = min(max((y + sy) * (nrow - 1) / (2.0 * sy), 0.0), nrow - 1.0)
    c = min(int(fx), ncol - 2)
    r = min(int(fy), nrow - 2)
    u = fx - c
    v = fy - r
    h00 = _height(data, adr, ncol, r, c, sz)
    h11 = _height(data, adr, ncol, r + 1, c + 1, sz)
    if u >= v:
        h10 = _height(data, adr, ncol, r, c + 1, sz)
        return h00 + u * (h10 - h00) + v * (h11 - h10)
    h01 = _height(data, adr, ncol, r + 1, c, sz)
    return h00 + v * (h01 - h00) + u * (h11 - h01)


@nb.njit(inline="always", cache=True)
def _triangle(h0, slope_u, slope_v, u0, v0, du, dv, oz, dz, t_in, t_out, upper):
    """The ``t`` in ``[t_in, t_out]`` where the ray meets the plane ``h0 + u slope_u + v slope_v`` inside
    its triangle (``upper``: ``v > u``, else ``u >= v``), or MISS."""
    denominator = dz - du * slope_u - dv * slope_v
    if abs(denominator) < _EPS:
        return MISS
    t = (h0 + u0 * slope_u + v0 * slope_v - oz) / denominator
    tolerance = 1e-9 * (1.0 + abs(t))
    if t < t_in - tolerance or t > t_out + tolerance:
        return MISS
    u = u0 + t * du
    v = v0 + t * dv
    if upper:
        if v + 1e-9 < u:
            return MISS
    elif u + 1e-9 < v:
        return MISS
    return max(t, 0.0)


@nb.njit(inline="always", cache=True)
def _cell_hit(data, adr, ncol, r, c, sz, cell_x, cell_y, ox, oy, oz, dx, dy, dz, t_in, t_out):
    h00 = _height(data, adr, ncol, r, c, sz)
    h10 = _height(data, adr, ncol, r, c + 1, sz)
    h01 = _height(data, adr, ncol, r + 1, c, sz)
    h11 = _height(data, adr, ncol, r + 1, c + 1, sz)
    top = max(max(h00, h10), max(h01, h11))
    if min(oz + t_in * dz, oz + t_out * dz) > top:
        return MISS  # the ray passes above the whole cell
    u0, du = ox / cell_x - c, dx / cell_x  # local (x, y) already shifted so the field starts at 0
    v0, dv = oy / cell_y - r, dy / cell_y
    lower = _triangle(h00, h10 - h00, h11 - h10, u0, v0, du, dv, oz, dz, t_in, t_out, False)
    upper = _triangle(h00, h11 - h01, h01 - h00, u0, v0, du, dv, oz, dz, t_in, t_out, True)
    return _nearer(lower, upper)


@nb.njit(inline="always", cache=True)
def ray_hfield(ox, oy, oz, dx, dy, dz, data, adr, nrow, ncol, sx, sy, sz, base, t_max):
    """First hit within ``t <= t_max`` (module docstring)."""
    t_in, t_out = _slab(ox, dx, -sx, sx, -math.inf, math.inf)
    t_in, t_out = _slab(oy, dy, -sy, sy, t_in, t_out)
    side = t_in  # where the ray enters the x / y walls of the field's prism
    t_in, t_out = _slab(oz, dz, -base, sz, t_in, t_out)
    t_out = min(t_out, t_max)
    if t_in > t_out or t_out < 0.0:
        return MISS
    t_in = max(t_in, 0.0)
    if t_in > 0.0 and t_in == side:  # entered through a wall: below the surface there, the wall is hit
        if oz + t_in * dz < _surface(data, adr, nrow, ncol, sx, sy, sz, ox + t_in * dx, oy + t_in * dy):
            return t_in
    cell_x = 2.0 * sx / (ncol - 1)
    cell_y = 2.0 * sy / (nrow - 1)
    px, py = ox + sx, oy + sy  # the ray with the field's corner at the origin
    c = min(max(int(math.floor((px + t_in * dx) / cell_x)), 0), ncol - 2)
    r = min(max(int(math.floor((py + t_in * dy) / cell_y)), 0), nrow - 2)
    step_c = 1 if dx > 0.0 else -1
    step_r = 1 if dy > 0.0 else -1
    next_c = (c + (1 if dx > 0.0 else 0)) * cell_x
    next_r = (r + (1 if dy > 0.0 else 0)) * cell_y
    t_next_c = (next_c - px) / dx if abs(dx) > _EPS else math.inf
    t_next_r = (next_r - py) / dy if abs(dy) > _EPS else math.inf
    delta_c = cell_x / abs(dx) if abs(dx) > _EPS else math.inf
    delta_r = cell_y / abs(dy) if abs(dy) > _EPS else math.inf
    t = t_in
    while t <= t_out:
        t_exit = min(min(t_next_c, t_next_r), t_out)
        hit = _cell_hit(data, adr, ncol, r, c, sz, cell_x, cell_y, px, py, oz, dx, dy, dz, t, t_exit)
        if hit >= 0.0:
            return hit
        if t_exit >= t_out:
            return MISS
        if t_next_c < t_next_r:
            c += step_c
            t = t_next_c
            t_next_c += delta_c
            if c < 0 or c > ncol - 2:
                return MISS
        else:
            r += step_r
            t = t_next_r
            t_next_r += delta_r
            if r < 0 or r > nrow - 2:
                return MISS
    return MISS
