"""Which addresses a user-named URL may reach: the one predicate.

An address is allowed only when it is global. Forms that carry another
address inside them (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
6to4 `2002:…`, Teredo, the NAT64 well-known prefix `64:ff9b::/96`) are judged
by the address they carry as well, so `::ffff:127.0.0.1` is loopback. A host
written as a number (`2130706433`, `0x7f000001`, `127.1`) is read the way the
system's resolver would read it, so it cannot pass as a name.
"""

from __future__ import annotations

import ipaddress
import re
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix
_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated IPv4-compatible
_NUMERIC = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)(\.(0[xX][0-9a-fA-F]+|[0-9]+)){0,3}")


def _carried_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form stands for outright (mapped, compatible, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64 or (ip in _COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def embedded(ip: IPAddress) -> list[IPAddress]:
    """The addresses to judge `ip` by: the IPv4 it stands for, else itself and any it tunnels to."""
    if isinstance(ip, ipaddress.IPv4Address):
        return [ip]
    carried = _carried_v4(ip)
    if carried is not None:  # ::ffff:a.b.c.d *is* a.b.c.d on the wire
        return [carried]
    found: list[IPAddress] = [ip]
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return found


def _global(ip: IPAddress) -> bool:
    # is_global alone lets multicast through (224.0.0.1, ff02::1); the rest is belt and braces.
    return bool(
        ip.is_global
        and not (
            ip.is_multicast
            or ip.is_reserved
            or ip.is_loopback
            or ip.is_link_local
            or ip.is_private
            or ip.is_unspecified
            or ip in _SHARED
            or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
        )
    )


def is_allowed(address: str | IPAddress) -> bool:
    """True only for a global address whose embedded forms are global too."""
    ip = address if not isinstance(address, str) else ipaddress.ip_address(address.split("%", 1)[0])
    return all(_global(each) for each in embedded(ip))


def literal(host: str) -> IPAddress | None:
    """The address `host` names by itself (`[::1]`, `127.0.0.1`, `2130706433`, `0x7f.1`), or None for a name."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if _NUMERIC.fullmatch(bare):
        try:  # inet_aton reads decimal, hex, octal and short forms as getaddrinfo does
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None
