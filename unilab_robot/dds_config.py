"""The Cyclone DDS configuration the robot bridge runs under (no ``cyclonedds`` import here).

By default everything stays on this machine: the loopback interface only, multicast off
(so no SPDP discovery multicast leaves the host), and unicast discovery of the one peer
``127.0.0.1`` (each participant takes an automatic participant index, and discovery pings the
ports of indices ``0 .. max_participants`` on the peers). :meth:`DdsConfig.xml` writes it as
the ``CYCLONEDDS_URI`` XML that :func:`apply` puts in the environment before the first
participant exists (and that child processes inherit).

On a real robot, name its interface (``--interface enp3s0``, optionally ``--peer 192.168.123.161``);
Unitree's robots use domain 0, its simulators domain 1 on ``lo``. A robot's participants run
Cyclone's defaults as Unitree's SDK sets them: multicast discovery, and no participant index, so
their unicast discovery ports are arbitrary and the index ports a unicast-only configuration pings
(``7410 + 250 d + 2 i``) reach nobody. So off loopback the configuration (a) allows multicast for
participant discovery only (``AllowMulticast spdp``: SPDP to ``239.255.0.1:7400 + 250 d``) on the
named interface only, with a multicast TTL of 1 (the packets stay on the robot's link), endpoint
discovery and data staying unicast; and (b) pings each peer on the domain's default discovery port
(``PEER:7400 + 250 d``, where a participant without an index still receives unicast, on the socket
it listens for discovery multicasts with) besides its index ports. ``multicast=False`` keeps (b)
alone, which reaches one process of the robot (the one whose socket the kernel hands the unicast).
:meth:`DdsConfig.wire` says, line by line, what goes on the wire to which address.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

ENV = "CYCLONEDDS_URI"
#: what to do when the ``cyclonedds`` binding is missing (one line)
INSTALL_HINT = 'the robot bridge needs Cyclone DDS\'s Python binding: pip install -e ".[robot]" (or pip install cyclonedds==11.0.1)'
LOOPBACK = "127.0.0.1"
#: DDSI port numbering (Cyclone's defaults, the DDSI spec's PB, DG, PG, d0, d1)
PORT_BASE, DOMAIN_GAIN, PARTICIPANT_GAIN, SPDP_MULTICAST_OFFSET, UNICAST_META_OFFSET = 7400, 250, 2, 0, 10
SPDP_GROUP = "239.255.0.1"


def spdp_port(domain_id: int) -> int:
    """The domain's default discovery port: SPDP multicast goes there, and a participant without an index receives
    unicast discovery there too (``7400 + 250 d``)."""
    return PORT_BASE + DOMAIN_GAIN * domain_id + SPDP_MULTICAST_OFFSET


def index_port(domain_id: int, index: int) -> int:
    """The unicast discovery port of participant index ``index`` (``7410 + 250 d + 2 i``)."""
    return PORT_BASE + DOMAIN_GAIN * domain_id + UNICAST_META_OFFSET + PARTICIPANT_GAIN * index


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP or the interface name ``lo``) is this machine's loopback."""
    if address == "lo":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class DdsConfig:
    """Domain, interface and peers of the bridge; loopback, multicast off, peer 127.0.0.1 by default.

    ``interface``: an IPv4 address or an interface name; ``peers``: addresses discovery pings
    (unicast); ``trace_file``: Cyclone's config trace (the effective settings) written there;
    ``multicast``: participant discovery by multicast on ``interface`` (``None``: on off loopback,
    where it finds a robot at Cyclone's default settings; never on loopback).
    """

    domain_id: int = 1
    interface: str = LOOPBACK
    peers: tuple[str, ...] = (LOOPBACK,)
    max_participants: int = 32
    trace_file: str | None = None
    multicast: bool | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.domain_id <= 232:
            raise ValueError(f"DDS domain id must be in 0..232, got {self.domain_id}")
        if self.multicast and is_loopback(self.interface):
            raise ValueError("multicast discovery is for a robot's network interface; on loopback it stays off")
        if not self.peers and not self.uses_multicast:
            raise ValueError("give at least one DDS peer address (--peer; multicast discovery is off)")
        if is_loopback(self.interface) and not all(is_loopback(p) for p in self.peers):
            raise ValueError(f"the loopback interface reaches only loopback peers; got {', '.join(self.peers)}: "
                             f"pass --interface with the robot's network interface")

    @property
    def local_only(self) -> bool:
        """Whether no packet can leave this machine (loopback interface, loopback peers)."""
        return is_loopback(self.interface) and all(is_loopback(p) for p in self.peers)

    @property
    def uses_multicast(self) -> bool:
        """Whether participant discovery multicasts on the interface (off loopback unless ``multicast=False``)."""
        return (not is_loopback(self.interface)) if self.multicast is None else self.multicast

    def peer_addresses(self) -> list[str]:
        """The ``Peer`` addresses: each peer (its index ports), and off loopback also ``PEER:7400+250d``."""
        out = []
        for p in self.peers:
            out.append(p)
            if not is_loopback(p):
                out.append(f"{p}:{spdp_port(self.domain_id)}")
        return out

    def xml(self) -> str:
        """The ``CYCLONEDDS_URI`` XML of this configuration."""
        key = "address" if _is_address(self.interface) else "name"
        flag = "" if self.uses_multicast else " multicast=\"false\""
        iface = f"<NetworkInterface {key}={quoteattr(self.interface)}{flag}/>"
        multicast = ("<AllowMulticast>spdp</AllowMulticast><MulticastTimeToLive>1</MulticastTimeToLive>"
                     if self.uses_multicast else "<AllowMulticast>false</AllowMulticast>")
        peers = "".join(f"<Peer address={quoteattr(p)}/>" for p in self.peer_addresses())
        trace = (f"<Tracing><Category>config</Category><OutputFile>{self.trace_file}</OutputFile></Tracing>"
                 if self.trace_file else "")
        return ("<CycloneDDS xmlns=\"https://cdds.io/config\"><Domain Id=\"any\">"
                f"<General><Interfaces>{iface}</Interfaces>{multicast}</General>"
                f"<Discovery><ParticipantIndex>auto</ParticipantIndex>"
                f"<MaxAutoParticipantIndex>{self.max_participants}</MaxAutoParticipantIndex>"
                f"{f'<Peers>{peers}</Peers>' if peers else ''}</Discovery>{trace}</Domain></CycloneDDS>")

    def wire(self) -> list[str]:
        """What goes on the wire to which address under this configuration, one line each."""
        d, n = self.domain_id, self.max_participants
        lines = [f"domain {d}, interface {self.interface} only"
                 + (": loopback, nothing leaves this machine" if self.local_only else "")]
        if self.uses_multicast:
            lines.append(f"participant discovery (SPDP): multicast to {SPDP_GROUP}:{spdp_port(d)} on {self.interface} "
                         f"only, TTL 1 (stays on that link)")
        else:
            lines.append("multicast: off (nothing is multicast, discovery included)")
        for p in self.peers:
            extra = "" if is_loopback(p) else f"{spdp_port(d)} (the domain's default port) and "
            lines.append(f"participant discovery (SPDP): unicast to {p}, UDP {extra}{index_port(d, 0)}-{index_port(d, n)} "
                         f"(participant indices 0-{n})")
        lines.append("endpoint discovery (SEDP) and data (rt/lowcmd, rt/lowstate, rt/api/...): unicast, to the "
                     "addresses and ports the discovered participants advertise")
        return lines

    def pretty(self) -> str:
        """The XML of :meth:`xml`, indented, after a comment holding :meth:`wire` (what ``--print-config`` shows)."""
        from xml.dom import minidom

        body = minidom.parseString(self.xml()).documentElement.toprettyxml(indent="  ").strip()
        comment = "\n".join(f"  {line.replace('--', '-')}" for line in self.wire())
        return f"<!-- unilab robot: Cyclone DDS configuration (CYCLONEDDS_URI)\n{comment}\n-->\n{body}\n"


def _is_address(interface: str) -> bool:
    try:
        ipaddress.ip_address(interface)
        return True
    except ValueError:
        return False


def apply(config: DdsConfig) -> str:
    """Put ``config`` in ``CYCLONEDDS_URI`` (replacing any other: the bridge runs under its own) and return the XML."""
    xml = config.xml()
    os.environ[ENV] = xml
    return xml
