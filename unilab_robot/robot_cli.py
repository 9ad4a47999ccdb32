"""``unilab robot sim|run``: the DDS robot bridge (:mod:`unilab_robot`).

    unilab robot sim policies/g1_joystick_real                    # a simulated G1 on rt/lowcmd / rt/lowstate (loopback)
    unilab robot run policies/g1_joystick_real --command fixed --vx 0.5 --log runs/robot/g1
    unilab robot run policies/g1_joystick_real                    # commands from the state's wireless remote
    unilab robot run policies/g1_joystick_real --control-port 7450  # accepts hot swaps on 127.0.0.1:7450
    unilab robot swap runs/adapted --port 7450                     # new weights between two control steps
    unilab robot rollback --port 7450                              # the previous policy back
    unilab robot run policies/g1_joystick_real --interface enp3s0 --print-config   # the DDS config for a robot

Both need the ``robot`` extra (``pip install -e ".[robot]"``); mistakes end in one line on
stderr and exit status 2. Everything stays on 127.0.0.1 unless --interface / --peer say otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DESCRIPTION = ("Drive a robot over Unitree's low-level DDS messages (rt/lowcmd, rt/lowstate) with an exported policy "
               "(`run`), or simulate one on the same wire in plain MuJoCo (`sim`). Cyclone DDS runs on the loopback "
               "interface with multicast off and the peer 127.0.0.1 unless --interface/--peer name a robot's network.")


def _wire_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--robot", choices=("g1", "go2"), help="the robot on the wire (default: the one whose motors the "
                                                          "spec's joints name)")
    p.add_argument("--domain", type=int, help="DDS domain id (default: 1 on loopback, as Unitree's simulators; 0 on a "
                                              "robot's interface, as Unitree's robots)")
    p.add_argument("--interface", default="127.0.0.1", help="network interface (address or name; default 127.0.0.1)")
    p.add_argument("--peer", action="append", help="unicast discovery peer (repeatable; default 127.0.0.1 on loopback, "
                                                   "none on a robot's interface, where discovery multicasts)")
    p.add_argument("--no-multicast", action="store_true",
                   help="on a robot's interface: no multicast discovery, only the --peer addresses (docs/robot_bridge.md)")
    p.add_argument("--print-config", action="store_true",
                   help="print the Cyclone DDS configuration (XML, with what goes on the wire to which address) and exit")
    p.add_argument("--duration", type=float, metavar="SECONDS", help="stop after this long (default: Ctrl-C)")
    p.add_argument("--seed", type=int, default=0, help="seed of resets, noise, loss and drawn commands (default 0)")
    p.add_argument("--summary", metavar="PATH.json", help="also write the end-of-run summary as JSON")
    p.add_argument("--spec", metavar="PATH", help="deploy spec to use instead of the one exported with the policy")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``unilab robot`` subcommands."""
    sub = p.add_subparsers(dest="robot_command", required=True, help="sim: a simulated robot; run: a policy on the robot")
    s = sub.add_parser("sim", help="a simulated robot on the wire (plain MuJoCo at the spec's physics rate)")
    s.add_argument("policy", help="policy folder or deploy spec whose model, reset and fall rule to simulate")
    _wire_arguments(s)
    s.add_argument("--model-path", metavar="FILE.xml", help="simulate another MJCF with the spec's names")
    s.add_argument("--latency-ms", type=float, default=0.0, help="wire latency each way (default 0)")
    s.add_argument("--loss", type=float, default=0.0, help="fraction of messages lost each way (default 0)")
    s.add_argument("--payload-kg", type=float, default=0.0, metavar="KG",
                   help="a payload on the spec's root body (its inertia scaled with its mass; default 0)")
    s.add_argument("--floor-friction", type=float, metavar="MU", help="the floor's sliding friction (a wet floor: 0.2-0.4; "
                                                                      "default: the model's)")
    s.add_argument("--sim2real", metavar="PROFILE", help="add this profile's observation noise to the sensors")
    s.add_argument("--gantry-s", type=float, default=2.0,
                   help="hold the base this long after the first command (default 2; 0: stand on the floor at once)")
    s.add_argument("--episode-s", type=float, help="reset the robot (as `unilab play` does) on a fall or after this long")
    s.add_argument("--cmd-timeout", type=float, default=0.1, help="no valid command for this long: damping (default 0.1 s)")
    s.add_argument("--remote", nargs=3, type=float, metavar=("LX", "LY", "RX"), default=(0.0, 0.0, 0.0),
                   help="the wireless remote's sticks the state carries, in [-1, 1] (default centred)")
    s.add_argument("--no-odom", action="store_true",
                   help="publish no rt/unilab/odom, as a real Unitree robot (whose rt/lowstate has no base velocity)")
    s.add_argument("--built-in", metavar="NAME", help="start with this built-in controller active (as a robot from boot: "
                                                      "it holds the joints, rt/lowcmd is ignored until a motion_switcher "
                                                      "ReleaseMode; default: none, the low-level mode)")
    s.add_argument("--clip", metavar="NAME", help="motion tracking: the clip each episode starts on (CMU_016_22; default: the spec's first)")
    s.add_argument("--release-delay", type=float, default=0.5, metavar="SECONDS",
                   help="--built-in: how long the controller takes to let go after ReleaseMode (default 0.5 s)")
    ls = sub.add_parser("lockstep", help="runtime and simulated robot on one virtual clock (no DDS): falls over episodes")
    ls.add_argument("policy", help="folder holding policy.onnx and deploy_spec.json")
    ls.add_argument("--episodes", type=int, default=64, help="episodes to run (default 64)")
    ls.add_argument("--episode-s", type=float, help="episode length (default: the spec's max_steps)")
    ls.add_argument("--latency-ms", type=float, default=0.0, help="wire latency each way (default 0)")
    ls.add_argument("--loss", type=float, default=0.0, help="fraction of messages lost each way (default 0)")
    ls.add_argument("--seed", type=int, default=0, help="seed of resets, loss and drawn commands (default 0)")
    ls.add_argument("--summary", metavar="PATH.json", help="also write the summary as JSON")
    ls.add_argument("--spec", metavar="PATH", help="deploy spec to use instead of the one exported with the policy")
    ls.add_argument("--floor-friction", type=float, metavar="MU", help="the simulated floor's sliding friction "
                                                                       "(a wet floor: 0.4; default: the model's)")
    ls.add_argument("--payload-kg", type=float, default=0.0, metavar="KG",
                    help="a payload on the simulated robot's root body (its inertia scaled with its mass; default 0)")
    ls.add_argument("--swap", metavar="FOLDER", help="hot-swap this policy folder in while running (measures the swap)")
    ls.add_argument("--swap-at", type=float, default=10.0, metavar="SECONDS",
                    help="--swap: ask for the swap at this virtual time (default 10 s)")
    ls.add_argument("--log", metavar="PATH", help="per-step log: PATH.csv and PATH.npz (docs/robot_bridge.md)")
    ls.add_argument("--clip", metavar="NAME", help="motion tracking: play this clip of the spec (CMU_016_22) in every "
                                                   "episode, from its first frame (default: the spec's first); the "
                                                   "summary says per episode whether it reached the clip's end")
    idf = sub.add_parser("identify", help="fit floor friction (and motor strength, latency, payload) to a step log")
    idf.add_argument("log", help="the step log (PATH.npz `unilab robot run --log PATH` wrote)")
    idf.add_argument("--policy", required=True, help="the policy folder the log was recorded with (its spec and model)")
    idf.add_argument("--friction-range", nargs=2, type=float, default=(0.05, 1.5), metavar=("LO", "HI"),
                     help="search range of the floor friction (default 0.05 1.5)")
    idf.add_argument("--strength", action="store_true", help="also fit the motor strength (a scale on kp, kd, torque)")
    idf.add_argument("--latency", action="store_true",
                     help="also fit the loop's latency (logged state -> its command applied), in physics steps")
    idf.add_argument("--max-latency-steps", type=int, metavar="N",
                     help="--latency: search 0..N physics steps (default: 3 control steps' worth)")
    idf.add_argument("--payload", action="store_true", help="also fit a payload (kg) on the spec's root body")
    idf.add_argument("--payload-range", nargs=2, type=float, default=(-2.0, 6.0), metavar=("LO", "HI"),
                     help="search range of the payload in kg (default -2 6)")
    idf.add_argument("--horizon", type=int, default=10, help="control steps replayed per window (default 10)")
    idf.add_argument("--summary", metavar="PATH.json", help="also write the fit as JSON")
    for verb, text in (("swap", "hot-swap a policy folder into a running `unilab robot run --control-port`"),
                       ("rollback", "the running runtime's previous policy back"),
                       ("status", "which policy the running runtime acts with")):
        c = sub.add_parser(verb, help=text)
        if verb == "swap":
            c.add_argument("folder", help="folder holding policy.onnx and deploy_spec.json (what `unilab export` writes)")
            c.add_argument("--gate", metavar="FIT.json",
                           help="first score the candidate and the running policy on the same held-out simulated "
                                "episodes (lock step) under the world `unilab robot identify --summary FIT.json` found; "
                                "hand it over only if it falls no more often (else exit 3)")
            c.add_argument("--gate-episodes", type=int, default=32, help="--gate: episodes per policy (default 32)")
            c.add_argument("--gate-seed", type=int, default=90000, help="--gate: seed of those episodes (default 90000)")
            c.add_argument("--against", metavar="FOLDER",
                           help="--gate: the running policy's folder (default: the one the runtime's status names)")
        c.add_argument("--port", type=int, required=True, help="the runtime's --control-port (on 127.0.0.1)")
        c.add_argument("--timeout", type=float, default=60.0, help="wait this long for the answer (default 60 s)")
    r = sub.add_parser("run", help="run an exported policy on the robot over DDS")
    r.add_argument("policy", help="folder holding policy.onnx and deploy_spec.json (e.g. policies/g1_joystick_real)")
    _wire_arguments(r)
    r.add_argument("--command", dest="command_source", choices=("remote", "fixed", "script", "keyboard"), default="remote",
                   help="velocity command source: the state's wireless remote (default), --vx/--vy/--yaw, drawn "
                        "as training draws them (script), or this terminal's keys (keyboard: w/s a/d q/e, Space stop, "
                        "x damping)")
    r.add_argument("--clip", metavar="NAME", help="motion tracking: the clip of the spec to play (CMU_016_22; default: the spec's first)")
    r.add_argument("--vx", type=float, default=0.0, help="--command fixed: forward speed (m/s)")
    r.add_argument("--vy", type=float, default=0.0, help="--command fixed: sideways speed (m/s)")
    r.add_argument("--yaw", type=float, default=0.0, help="--command fixed: yaw rate (rad/s)")
    r.add_argument("--damping-s", type=float, default=0.5, help="start-up damping (default 0.5 s)")
    r.add_argument("--move-s", type=float, default=1.5, help="timed move to the home pose (default 1.5 s)")
    r.add_argument("--state-timeout", type=float, default=0.1, help="no fresh state for this long: damping (default 0.1 s)")
    r.add_argument("--connect-timeout", type=float, default=5.0, help="wait this long for the robot (default 5 s)")
    r.add_argument("--state-crc", choices=("auto", "on", "off"), default="auto",
                   help="states whose CRC field is 0 (unitree_mujoco sends them so): auto accepts them on loopback only "
                        "(default), on drops them, off checks no state CRC")
    r.add_argument("--force-body", action="store_true",
                   help="run a policy trained on another body than the robot's (a Go1 policy on a Go2) on a real robot")
    r.add_argument("--motion-switcher", choices=("auto", "on", "off"), default="auto",
                   help="ask the robot's motion_switcher service to release its built-in controller and confirm before "
                        "any low-level command: auto (default) off loopback only, on, off (you released it yourself)")
    r.add_argument("--log", metavar="PATH", help="per-step log: PATH.csv streamed, PATH.npz at the end (docs/robot_bridge.md)")
    r.add_argument("--follow-episodes", action="store_true", help="restart the controller on the simulator's new episodes")
    r.add_argument("--rt", action="store_true", help="ask for real-time priority (SCHED_FIFO 50; needs the right)")
    r.add_argument("--control-port", type=int, metavar="PORT",
                   help="accept hot swaps and rollbacks (`unilab robot swap|rollback --port PORT`) on 127.0.0.1:PORT")


def _fail(message: object) -> int:
    print(f"unilab robot: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Entry point of ``unilab robot``."""

    if args.robot_command == "lockstep":
        return _lockstep(args)
    if args.robot_command in ("swap", "rollback", "status"):
        return _control(args)
    if args.robot_command == "identify":
        return _identify(args)
    try:
        config = _dds_config(args)
    except ValueError as e:
        return _fail(e)
    if args.print_config:
        print(config.pretty(), end="")
        return 0
    try:
        from unilab_robot.dds import DdsTransport
    except ImportError as e:
        return _fail(e)
    from unilab_robot.model import load_play_model
    from unilab_robot.policy import PlayError, find_policy
    from unilab_robot.deploy import SpecError, load_spec
    from unilab_robot.motors import NameMapError, robot_def, robot_for_joints

    try:
        path = Path(args.policy)
        if path.is_file() and path.suffix == ".json":
            bundle, spec = None, load_spec(path)
        else:
            bundle = find_policy(path, args.spec)
            spec = bundle.spec
        model = load_play_model(spec, getattr(args, "model_path", None))
        robot = robot_def(args.robot) if args.robot else robot_for_joints(spec.action.joint_names)
    except (PlayError, SpecError, NameMapError, ValueError) as e:
        return _fail(e)
    code = (_sim if args.robot_command == "sim" else _run)(args, spec, model, robot, bundle, config, DdsTransport)
    return code


def _dds_config(args):
    """The DDS configuration the wire options give: domain 1 and peer 127.0.0.1 on loopback; on a robot's interface
    domain 0, multicast discovery on that interface only (unless --no-multicast) and the --peer addresses."""
    from unilab_robot.dds_config import LOOPBACK, DdsConfig, is_loopback

    local = is_loopback(args.interface)
    domain = args.domain if args.domain is not None else (1 if local else 0)
    peers = tuple(args.peer) if args.peer else ((LOOPBACK,) if local else ())
    return DdsConfig(domain_id=domain, interface=args.interface, peers=peers,
                     multicast=False if args.no_multicast else None)


def _summary(args, summary: dict) -> None:
    print(json.dumps(summary))
    if args.summary:
        Path(args.summary).parent.mkdir(parents=True, exist_ok=True)
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n")


def _sim(args, spec, model, robot, bundle, config, DdsTransport) -> int:
    from unilab_robot import messages as M
    from unilab_robot.remote import Remote
    from unilab_robot.sim import NOISE_GROUPS, SimConfig, SimRobot

    noise, dist = (), "uniform"
    try:
        if args.sim2real:
            from unilab_robot.deploy.sim2real import load_play_profile

            section = load_play_profile(args.sim2real).get("observation_noise") or {}
            scales = {k: float(v) * float(section.get("level", 1.0)) for k, v in (section.get("scales") or {}).items()}
            noise = tuple((k, v) for k, v in scales.items() if k in NOISE_GROUPS)
            dist = section.get("distribution", "uniform")
        lx, ly, rx = args.remote
        if args.floor_friction is not None:
            if not args.floor_friction > 0:
                raise ValueError(f"--floor-friction must be > 0, got {args.floor_friction}")
            from unilab_robot.identify import set_floor_friction

            set_floor_friction(model, args.floor_friction)
        if args.payload_kg:
            from unilab_robot.identify import add_payload

            add_payload(spec, model, args.payload_kg)
        sim_config = SimConfig(latency_s=args.latency_ms / 1e3, loss=args.loss, noise=noise, noise_distribution=dist,
                               gantry_s=args.gantry_s, cmd_timeout_s=args.cmd_timeout, episode_s=args.episode_s,
                               seed=args.seed, remote=Remote(lx=lx, ly=ly, rx=rx), built_in=args.built_in,
                               release_delay_s=args.release_delay, odom=not args.no_odom, clip=args.clip)
    except (ValueError, OSError) as e:
        return _fail(e)
    from unilab_robot.api import Request, Response
    from unilab_robot.motion_switcher import TOPIC_REQUEST, TOPIC_RESPONSE

    topics = {M.TOPIC_CMD: robot.family.cmd, M.TOPIC_STATE: robot.family.state, M.TOPIC_ODOM: M.ODOM,
              TOPIC_REQUEST: Request, TOPIC_RESPONSE: Response}  # the motion_switcher service it emulates
    transport = DdsTransport(config, topics, publish=(M.TOPIC_STATE, *((M.TOPIC_ODOM,) if sim_config.odom else ()), TOPIC_RESPONSE),
                             subscribe=(M.TOPIC_CMD, TOPIC_REQUEST))
    try:
        sim = SimRobot(spec, model, robot, transport, sim_config)
    except ValueError as e:  # a clip the spec lacks
        transport.close()
        return _fail(e)
    print(f"unilab robot sim: {robot.name} ({robot.family.state_type}) on domain {config.domain_id}, interface "
          f"{config.interface}, {1 / sim.dt:.0f} Hz physics"
          + (f"; built-in controller {args.built_in!r} active until released" if args.built_in else "")
          + ("; no rt/unilab/odom (as a real robot)" if not sim_config.odom else ""),
          file=sys.stderr, flush=True)
    try:
        summary = sim.run(args.duration)
    finally:
        transport.close()
    _summary(args, {**summary, "base_xy": [round(float(v), 3) for v in sim.data.qpos[sim.io.root_q:sim.io.root_q + 2]]
                    if sim.io.root_q >= 0 else None})
    return 0


def _run(args, spec, model, robot, bundle, config, DdsTransport) -> int:
    import os

    from unilab_robot.policy import OnnxPolicy, PlayError
    from unilab_robot import messages as M
    from unilab_robot.motors import NameMapError, body_mismatch
    from unilab_robot.state_io import needs_odometry
    from unilab_robot.runtime import RobotRuntime, RuntimeConfig, RuntimeFault
    from unilab_robot.steplog import StepLog, log_file

    if bundle is None:
        return _fail(f"{args.policy} is a deploy spec; `unilab robot run` needs the policy folder (policy.onnx beside it)")
    say = lambda line: print(f"unilab robot run: {line}", file=sys.stderr, flush=True)  # noqa: E731
    other_body = body_mismatch(robot, spec.model.root_body, spec.task.id)
    if other_body and not config.local_only and not args.force_body:
        return _fail(f"{other_body} (--force-body runs it anyway)")
    try:
        policy = OnnxPolicy(bundle.onnx, spec)
        rc = RuntimeConfig(damping_s=args.damping_s, move_s=args.move_s, state_timeout_s=args.state_timeout,
                           connect_timeout_s=args.connect_timeout, command=args.command_source,
                           fixed_command=(args.vx, args.vy, args.yaw), follow_episodes=args.follow_episodes,
                           seed=args.seed, state_crc=args.state_crc, local_only=config.local_only, clip=args.clip)
    except (PlayError, ValueError) as e:
        return _fail(e)
    from unilab_robot.api import Request, Response
    from unilab_robot.motion_switcher import (TOPIC_REQUEST, TOPIC_RESPONSE, MotionSwitcherClient,
                                                   MotionSwitcherError, release_built_in)

    switcher = args.motion_switcher == "on" or (args.motion_switcher == "auto" and not config.local_only)
    topics = {M.TOPIC_CMD: robot.family.cmd, M.TOPIC_STATE: robot.family.state, M.TOPIC_ODOM: M.ODOM,
              **({TOPIC_REQUEST: Request, TOPIC_RESPONSE: Response} if switcher else {})}
    transport = DdsTransport(config, topics, publish=(M.TOPIC_CMD, *((TOPIC_REQUEST,) if switcher else ())),
                             subscribe=(M.TOPIC_STATE, M.TOPIC_ODOM, *((TOPIC_RESPONSE,) if switcher else ())))
    if switcher:  # before any low-level command: the robot's built-in controller released, or nothing is sent
        try:
            release_built_in(MotionSwitcherClient(transport, timeout_s=args.connect_timeout), say, robot=robot.name)
        except MotionSwitcherError as e:
            transport.close()
            return _fail(e)
    try:
        keys = _keyboard(spec, say) if rc.command == "keyboard" else None
        runtime = RobotRuntime(spec, model, policy, robot, transport, rc, say=say,
                               keyboard=keys.keys if keys is not None else None)
    except (NameMapError, ValueError) as e:  # the robot is told to damp before we leave
        _damp_all(robot, transport)
        transport.close()
        return _fail(f"{e}; damping sent")
    if other_body:  # on loopback the simulated robot is the policy's own body
        say(f"note: {other_body}; on loopback the simulated robot has the policy's own body")
    say("the policy reads the base velocity: it needs rt/unilab/odom (a state estimator on the robot publishes it)"
        if needs_odometry(spec) else
        "the policy reads only rt/lowstate (IMU, joints): no odometry needed")
    if args.rt:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
        except (PermissionError, OSError, AttributeError) as e:
            say(f"no real-time priority ({e.__class__.__name__}: run as root or grant CAP_SYS_NICE); running without")
    server = None
    if args.control_port is not None:
        from unilab_robot.control import serve
        from unilab_robot.swap import HotSwap

        runtime.swap = HotSwap(spec, policy, bundle.folder, events=_events_path(args.log),
                               say=say)
        try:
            server = serve(runtime.swap, args.control_port)
        except OSError as e:
            transport.close()
            return _fail(e)
        say(f"hot swap: `unilab robot swap FOLDER --port {args.control_port}` (rollback, status) on 127.0.0.1")
    log = StepLog(args.log, runtime.log_groups()) if args.log else None
    runtime.log = log
    try:
        if keys is not None:
            say(f"keyboard: {keys.help}")
            keys.start()
        runtime.wait_for_robot()
        say(f"{robot.name} found on domain {config.domain_id}: damping {rc.damping_s:g} s, move to home {rc.move_s:g} s, "
            f"then the policy at {1 / spec.timing.control_dt:.0f} Hz (commands: {rc.command})")
        summary = runtime.run(args.duration)
    except RuntimeFault as e:
        runtime.damp()
        return _fail(f"{e}; damping sent")
    finally:
        if keys is not None:
            keys.close()
        if server is not None:
            server.shutdown()
            server.server_close()
        if log is not None:
            say(f"log: {log.close()} and {log_file(log.path, '.csv')}")
        transport.close()
    _summary(args, summary)
    return 0 if summary["fault"] is None else 1


def _keyboard(spec, say):
    """This terminal's keys as the velocity command (the caller starts and closes the reader);
    ``ValueError`` for a spec without a velocity command or a stdin that is not a terminal."""
    from unilab_robot.keyboard import DAMP_KEY, KeyboardCommand, KeyboardError, TerminalKeyboard

    if spec.command.kind != "velocity":
        raise ValueError(f"--command keyboard sets a velocity command; this policy's command is {spec.command.kind!r}")
    def shown(key, c):
        if key != DAMP_KEY:  # the runtime says the damping line itself
            say(f"command vx {c[0]:+.2f} m/s, vy {c[1]:+.2f} m/s, yaw {c[2]:+.2f} rad/s")

    try:
        return TerminalKeyboard(KeyboardCommand(spec.command.ranges), on_key=shown)
    except KeyboardError as e:
        raise ValueError(str(e)) from None


def _events_path(log: str | None) -> str | None:
    """The hot swap's event lines beside the step log: ``PATH.swaps.jsonl`` (PATH as the log's, suffix dropped)."""
    from unilab_robot.steplog import log_file

    return str(log_file(log, ".swaps.jsonl")) if log else None


def _damp_all(robot, transport) -> None:
    """Damping on every motor of ``robot`` (Kp 0, Kd 1), a few times."""
    import time

    from unilab_robot import messages as M
    from unilab_robot.crc import stamp_crc

    waited = 0.0
    while transport.matched(M.TOPIC_CMD) == 0 and waited < 1.0:  # the robot's reader, if it is there
        time.sleep(0.02)
        waited += 0.02
    msg = M.new_cmd(robot.family)
    n = len(robot.motors)
    msg["motor_cmd"]["mode"][:n], msg["motor_cmd"]["kd"][:n] = M.MOTOR_ENABLE, 1.0
    stamp_crc(msg)
    for _ in range(3):
        transport.publish(M.TOPIC_CMD, msg)
        time.sleep(0.01)


def _lockstep(args) -> int:
    """Runtime and simulated robot in lock step on the in-process wire: falls over ``--episodes`` episodes
    (the commands drawn as training draws them, each episode a fresh reset as `unilab play` draws one)."""
    import time

    from unilab_robot.policy import PlayError, find_policy
    from unilab_robot.gate import World, lockstep_pair
    from unilab_robot.lockstep import run_lockstep
    from unilab_robot.motors import NameMapError
    from unilab_robot.steplog import StepLog

    if args.swap and not args.log:
        return _fail("--swap measures the swap from the step log: add --log PATH")
    try:
        bundle = find_policy(args.policy, args.spec)
        world = World(args.floor_friction, args.payload_kg, args.latency_ms, args.loss)
        runtime, sim = lockstep_pair(bundle, world, args.episode_s, args.seed, clip=args.clip)
    except (PlayError, NameMapError, ValueError) as e:
        return _fail(e)
    if args.swap:
        from unilab_robot.swap import HotSwap

        runtime.swap = HotSwap(bundle.spec, runtime.policy, bundle.folder, say=lambda line: print(line, file=sys.stderr))
    log = StepLog(args.log, runtime.log_groups()) if args.log else None
    runtime.log = log
    start = time.perf_counter()
    done = lambda: sim.stats.episodes >= args.episodes  # noqa: E731
    t = 0.0
    split = {}
    if args.swap:  # run to --swap-at, ask for the swap (it loads on its thread while the loop runs on)
        t = run_lockstep(runtime, sim, args.swap_at, until=done)
        asked = len(log)
        before = (sim.stats.episodes, sim.stats.falls)
        print(f"unilab robot lockstep: hot swap {runtime.swap.request(args.swap)}", file=sys.stderr)
        t = run_lockstep(runtime, sim, 1e9, t0=t, until=lambda: done() or runtime.swap.current.id != 0)
        ongoing = sim.stats.episodes  # the episode the swap happened in is neither before nor after
        t = run_lockstep(runtime, sim, 1e9, t0=t, until=lambda: done() or sim.stats.episodes > ongoing)
        after = (sim.stats.episodes, sim.stats.falls)
    # start-up on the gantry (episode 0), then --episodes episodes
    run_lockstep(runtime, sim, 1e9, t0=t, until=done)
    if args.swap:
        split = {"before_swap": {"episodes": before[0], "falls": before[1]},
                 "after_swap": {"episodes": sim.stats.episodes - after[0], "falls": sim.stats.falls - after[1]}}
    summary = {**sim.summary(), "fall_rate": round(sim.stats.falls / max(1, sim.stats.episodes), 4),
               "wall_s": round(time.perf_counter() - start, 1), "runtime_mode": runtime.mode,
               "runtime_fault": runtime.fault_reason, **split}
    if log is not None:
        path = log.close()
        if args.swap:
            summary["swap"] = _swap_timing(path, asked, runtime.spec.timing.control_dt, runtime.swap.events)
    _summary(args, summary)
    return 0


def _swap_timing(path, asked: int, dt: float, events: list) -> dict:
    """Step times around a hot swap from the step log: the swap step, the steps while the candidate loaded, the rest."""
    import numpy as np

    from unilab_robot.steplog import load_log

    log = load_log(path)
    c, n = log["compute_s"] * 1e3, len(log["compute_s"])
    at = np.flatnonzero(log["swap"] == 1)
    if not len(at):
        return {"swapped": False, "events": [e["event"] for e in events]}
    at = int(at[0])
    first = min(asked, at)  # the first row after the request
    loading = c[first:at]
    others = np.delete(c, np.arange(first, at + 1))
    return {"swapped": True, "swap_row": at, "rows": n, "rows_while_loading": int(at - first),
            "swap_step_ms": round(float(c[at]), 3), "loading_max_ms": round(float(loading.max()), 3) if len(loading) else None,
            "others_ms_p50": round(float(np.percentile(others, 50)), 3),
            "others_ms_p99": round(float(np.percentile(others, 99)), 3), "others_ms_max": round(float(others.max()), 3),
            "missed": int(log["missed"].sum()), "period_ms": dt * 1e3,
            "load_s": next((e["load_s"] for e in events if e["event"] == "ready"), None)}


def _identify(args) -> int:
    """``unilab robot identify LOG --policy FOLDER``: the floor friction (and motor strength, latency, payload) that
    explain the log."""
    import time

    from unilab_robot.model import load_play_model
    from unilab_robot.policy import PlayError, find_policy
    from unilab_robot.identify import IdentifyConfig, IdentifyError, identify
    from unilab_robot.steplog import load_log, log_file

    path = log_file(args.log, ".npz")
    if not path.is_file():
        return _fail(f"{path} does not exist: pass the log `unilab robot run --log PATH` wrote (PATH or PATH.npz)")
    try:
        bundle = find_policy(args.policy)
        config = IdentifyConfig(friction_range=tuple(args.friction_range), strength=args.strength, horizon=args.horizon,
                                latency=args.latency, max_latency_steps=args.max_latency_steps, payload=args.payload,
                                payload_range=tuple(args.payload_range))
        start = time.perf_counter()
        fit = identify(bundle.spec, load_play_model(bundle.spec), load_log(path), config)
    except (PlayError, IdentifyError, OSError, ValueError) as e:
        return _fail(e)
    _summary(args, {**fit.summary(), "log": str(path), "wall_s": round(time.perf_counter() - start, 1)})
    return 0


def _control(args) -> int:
    """``unilab robot swap|rollback|status``: one request to the running runtime's control channel."""
    from unilab_robot.control import ask

    request = f"swap {Path(args.folder).resolve()}" if args.robot_command == "swap" else args.robot_command
    try:
        if args.robot_command == "swap" and args.gate:
            verdict = _gate(args, ask)
            print(verdict.line, file=sys.stderr if verdict.accepted else sys.stdout)
            if not verdict.accepted:
                return 3
        answer = ask(args.port, request, timeout=args.timeout)
    except (ConnectionError, ValueError) as e:
        return _fail(e)
    print(answer)
    return 2 if answer.startswith("refused") else 0


def _gate(args, ask):
    """``swap --gate FIT.json``: the candidate against the running policy on held-out lock-step episodes."""
    from unilab_robot.policy import PlayError
    from unilab_robot.gate import World, acting_folder, gate
    from unilab_robot.identified import load_fit

    world = World.from_fit(load_fit(args.gate))
    running = args.against or acting_folder(ask(args.port, "status", timeout=args.timeout))
    print(f"unilab robot swap: gate: {args.folder} against {running} on {args.gate_episodes} held-out simulated "
          f"episodes each ({world.describe()})", file=sys.stderr, flush=True)
    try:
        return gate(args.folder, running, world, args.gate_episodes, args.gate_seed)
    except PlayError as e:
        raise ValueError(str(e)) from None
