"""The DDS configuration a robot's network gets (multicast discovery on its interface only, TTL 1; peers pinged on the
domain's default port too), shown by --print-config; only the loopback configuration ever runs here."""

from __future__ import annotations

import os
import re

import pytest

from robot_support import G1_POLICY
from unilab_robot.dds_config import ENV, DdsConfig, index_port, spdp_port


def _print_config(capsys, *args):
    from trainers.cli import main

    code = main(["robot", "run", G1_POLICY, *args, "--print-config"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ports_are_cyclones_defaults():
    assert spdp_port(0) == 7400 and spdp_port(1) == 7650 and index_port(0, 0) == 7410 and index_port(1, 32) == 7724


def test_robot_interface_discovers_by_multicast_there_only(capsys):
    code, out, err = _print_config(capsys, "--interface", "enp3s0", "--peer", "192.168.123.161")
    assert code == 0 and err == ""
    assert '<NetworkInterface name="enp3s0"/>' in out  # multicast allowed (the OS's flag) on this interface, no other
    assert "<AllowMulticast>spdp</AllowMulticast>" in out and "<MulticastTimeToLive>1</MulticastTimeToLive>" in out
    assert re.findall(r'<Peer address="([^"]+)"/>', out) == ["192.168.123.161", "192.168.123.161:7400"]
    assert "domain 0, interface enp3s0 only" in out  # a robot's interface: Unitree's domain 0 by default
    assert "multicast to 239.255.0.1:7400 on enp3s0 only, TTL 1" in out
    assert "unicast to 192.168.123.161, UDP 7400 (the domain's default port) and 7410-7474" in out
    assert out.startswith("<!-- unilab robot: Cyclone DDS configuration")


def test_without_a_peer_multicast_alone_finds_the_robot():
    c = DdsConfig(domain_id=0, interface="192.168.123.99", peers=())
    xml = c.xml()
    assert '<NetworkInterface address="192.168.123.99"/>' in xml and "<Peers>" not in xml and not c.local_only


def test_no_multicast_needs_a_peer_and_pings_its_default_port(capsys):
    code, _, err = _print_config(capsys, "--interface", "enp3s0", "--no-multicast")
    assert code == 2 and err.strip() == "unilab robot: give at least one DDS peer address (--peer; multicast discovery is off)"
    code, out, _ = _print_config(capsys, "--interface", "enp3s0", "--no-multicast", "--peer", "10.0.0.2", "--domain", "2")
    assert code == 0 and '<NetworkInterface name="enp3s0" multicast="false"/>' in out
    assert "<AllowMulticast>false</AllowMulticast>" in out and '<Peer address="10.0.0.2:7900"/>' in out


def test_loopback_stays_as_it_was(capsys):
    code, out, _ = _print_config(capsys)
    assert code == 0 and "domain 1, interface 127.0.0.1 only: loopback, nothing leaves this machine" in out
    assert re.findall(r'<Peer address="([^"]+)"/>', out) == ["127.0.0.1"] and "spdp" not in out
    with pytest.raises(ValueError, match="multicast discovery is for a robot's network interface"):
        DdsConfig(multicast=True)


def test_the_printed_loopback_config_is_what_cyclone_runs(tmp_path):
    """--print-config's text (comment and all) as CYCLONEDDS_URI: Cyclone takes it, on lo only, multicast off."""
    pytest.importorskip("cyclonedds")
    import subprocess
    import sys

    trace = tmp_path / "cyclone.log"
    pretty = DdsConfig(domain_id=232, trace_file=str(trace)).pretty()
    script = "from cyclonedds.domain import DomainParticipant; DomainParticipant(232)"
    subprocess.run([sys.executable, "-c", script], env={**os.environ, ENV: pretty}, check=True, timeout=60)
    log = trace.read_text()
    assert re.search(r"selected interfaces: lo \([^)]*\)\s*$", log, re.M), log
    assert "Domain/General/AllowMulticast/#text: false" in log
