"""Network devices' consoles: a device prompt is dropped and the console's own words judged.

IOS/NX-OS/EOS, Junos, PAN-OS, FortiOS and F5 tmsh each have a way to reboot, wipe, unroute and open the box;
their read-only commands, `no shutdown` and scheduled-reload cancels stay quiet, and so do Unix commands
that share a word (`ip route add`, `clear`, `set -e`) and shell comments after one word.
"""

from __future__ import annotations

import pytest

from guardrails.repl import unprompted
from tests.guardrails.flagged import judged


@pytest.mark.parametrize("command, severity, rule", [
    ("Router# reload", "warn", "device-reload-bare"),
    ("Router# reload in 10", "warn", "device-reload"),
    ("user@mx1> request system reboot", "warn", "device-reload"),
    ("FGT # execute reboot", "warn", "device-reload"),
    ("user@mx1> request system zeroize", "block", "device-wipe"),
    ("Router# write erase", "block", "device-wipe"),
    ("FGT # execute factoryreset", "block", "device-wipe"),
    ("tmsh load sys config default", "block", "device-factory-config"),
    ("(tmos)# load sys config default", "block", "device-factory-config"),
    ("switch# delete flash:vlan.dat", "warn", "device-delete"),
    ("Router(config)# no router bgp 65001", "warn", "device-no-routing"),
    ("switch(config)# no spanning-tree vlan 1-4094", "warn", "device-no-routing"),
    ("Router# clear ip bgp *", "warn", "device-clear-sessions"),
    ("Router(config-line)# transport input telnet", "warn", "device-insecure-access"),
    ("Router(config)# snmp-server community public RW", "warn", "device-insecure-access"),
    ("user@mx1# set system services telnet", "warn", "device-insecure-access"),
    ("Router(config)# no aaa new-model", "warn", "device-no-security"),
    ("user@mx1# load override /var/tmp/candidate.conf", "warn", "device-load-replace"),
    ("(tmos)# modify ltm pool web members modify { all { session user-disabled } }", "warn", "tmsh-members-down"),
    ("tmsh modify sys httpd allow replace-all-with { ALL }", "warn", "tmsh-open-management"),
    ("switch(config-if)# shutdown", "warn", "host-power"),
])
def test_device_consoles(command: str, severity: str, rule: str) -> None:
    worst, rules = judged(command)
    assert worst == severity and rule in rules, (worst, rules)


@pytest.mark.parametrize("command", [
    "Router# reload cancel", "Router# write memory", "switch(config-if)# no shutdown", "Router# clear counters",
    "Router(config-line)# transport input ssh", "Router(config)# snmp-server community mon RO",
    "user@mx1# set system services ssh", "tmsh load sys config", "Router# show running-config | include shutdown",
    "Router> show ip interface brief", "FGT # execute ping 8.8.8.8", "user@mx1> show route summary",
    # Unix commands that share a word, and a comment after one word
    "ip route add 10.0.0.0/8 via 10.1.1.1", "ip addr show", "clear", "set -euo pipefail", "uptime # check load",
])
def test_device_look_alikes_stay_quiet(command: str) -> None:
    assert judged(command)[0] == "none", judged(command)


@pytest.mark.parametrize("line, read", [
    ("Router# reload", "reload"),
    ("sw1(config-if)# shutdown", "shutdown"),
    ("user@mx1> request system reboot", "request system reboot"),
    ("FortiGate-100F (global) # set admin-https-redirect disable", "set admin-https-redirect disable"),
    ("root@(bigip1)(cfg-sync Standalone)(Active)(/Common)(tmos)# save sys config", "tmsh save sys config"),
    ("mysql> RESET MASTER;", "mysql -e 'RESET MASTER;'"),  # a database client's prompt is still the client's
    ("uptime # check load", "uptime # check load"),
    ("patroni-01 # postmaster=x", "patroni-01 # postmaster=x"),
])
def test_device_prompts_are_read(line: str, read: str) -> None:
    assert unprompted(line) == read
