"""The Cyclone DDS configuration the robot bridge runs under (no ``cyclonedds`` import here).

By default everything stays on this machine: the loopback interface only, multicast off
(so no SPDP discovery multicast leaves the host), and unicast discovery of the one peer
``127.0.0.1`` (each participant takes an automatic participant index, and discovery pings the
ports of indices ``0 .. max_participants`` on the peers). :meth:`DdsConfig.xml` writes it as
the ``CYCLONEDDS_URI`` XML that :func:`apply` puts in the environment before the first
participant exists (and that child processes inherit).

On a real robot, name its interface and address (``--interface enp3s0 --peer 192.168.123.161``);
Unitree's robots use domain 0, its simulators domain 1 on ``lo``.
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
    (unicast); ``trace_file``: Cyclone's config trace (the effective settings) written there.
    """

    domain_id: int = 1
    interface: str = LOOPBACK
    peers: tuple[str, ...] = (LOOPBACK,)
    max_participants: int = 32
    trace_file: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.domain_id <= 232:
            raise ValueError(f"DDS domain id must be in 0..232, got {self.domain_id}")
        if not self.peers:
            raise ValueError("give at least one DDS peer address (multicast discovery is off)")
        if is_loopback(self.interface) and not all(is_loopback(p) for p in self.peers):
            raise ValueError(f"the loopback interface reaches only loopback peers; got {', '.join(self.peers)}: "
                             f"pass --interface with the robot's network interface")

    @property
    def local_only(self) -> bool:
        """Whether no packet can leave this machine (loopback interface, loopback peers)."""
        return is_loopback(self.interface) and all(is_loopback(p) for p in self.peers)

    def xml(self) -> str:
        """The ``CYCLONEDDS_URI`` XML of this configuration."""
        try:
            ipaddress.ip_address(self.interface)
            iface = f"<NetworkInterface address={quoteattr(self.interface)} multicast=\"false\"/>"
        except ValueError:
            iface = f"<NetworkInterface name={quoteattr(self.interface)} multicast=\"false\"/>"
        peers = "".join(f"<Peer address={quoteattr(p)}/>" for p in self.peers)
        trace = (f"<Tracing><Category>config</Category><OutputFile>{self.trace_file}</OutputFile></Tracing>"
                 if self.trace_file else "")
        return ("<CycloneDDS xmlns=\"https://cdds.io/config\"><Domain Id=\"any\">"
                f"<General><Interfaces>{iface}</Interfaces><AllowMulticast>false</AllowMulticast></General>"
                f"<Discovery><ParticipantIndex>auto</ParticipantIndex>"
                f"<MaxAutoParticipantIndex>{self.max_participants}</MaxAutoParticipantIndex>"
                f"<Peers>{peers}</Peers></Discovery>{trace}</Domain></CycloneDDS>")


def apply(config: DdsConfig) -> str:
    """Put ``config`` in ``CYCLONEDDS_URI`` (replacing any other: the bridge runs under its own) and return the XML."""
    xml = config.xml()
    os.environ[ENV] = xml
    return xml
