"""Pasted prompts: a terminal or a database client's prompt in front of what was typed.

People paste terminal sessions: `[root@mongo-02 ~]# rm -rf /var/lib/mongodb`, `user@db:~$ sudo
reboot`, `PS C:\\> Format-Volume -DriveLetter D`, `C:\\> rd /s /q C:\\`, `postgres=# TRUNCATE
payments;`, `mysql> RESET MASTER;`, `127.0.0.1:6379> FLUSHDB`, `rs0:PRIMARY> db.events.drop()`,
`cqlsh> TRUNCATE app.events;`, `SQL> DROP USER app CASCADE;`, and network devices' consoles:
`Router# reload`, `switch(config-if)# shutdown`, `user@mx1> request system zeroize`, `(tmos)# load sys
config default`, `FGT # execute factoryreset`. The prompt says which tool reads the line: a shell or a
device prompt is dropped (the device's commands are the policy's programs: reload, write, request, no), a database client's prompt turns the line into that client's
command (`redis-cli FLUSHDB`, `mongosh --eval "db.events.drop()"`, `psql -c "..."`), so the rules for
the tool judge it.
"""

from __future__ import annotations

import re
import shlex

# Shell prompts: `$ `, `user@host:~$ `, `user@host:~# `, `[root@host dir]# `, `PS C:\x> `, `C:\x> `. A bare
# `# ` starts a comment far more often than a root prompt: it is left to the shell reader.
_SHELL = re.compile(r"^[ \t]*(?:"
                    r"(?:[\w.-]+@[\w.-]+(?::[^$#\n>]*)?[$#%]|\[[\w.-]+@[\w.-]+[^\]\n]*\][$#]|\$)[ \t]+"
                    r"|PS [A-Za-z]:[^>\n]*>[ \t]*"
                    r"|[A-Za-z]:\\[^>\n]*>[ \t]*)")
# Network devices' prompts (read after the database clients': `mysql>` is a client): IOS/NX-OS/EOS `Router#`,
# `sw1(config-if)#`, `Router>`; Junos and PAN-OS `user@mx1>`; ONTAP `cluster1::>`; FortiOS `FGT # `.
_DEVICE = re.compile(r"^[ \t]*(?:[A-Za-z][\w.-]*(?:\((?:config|cfg)[\w-]*\))?[#>][ \t]+"
                     r"|[A-Za-z][\w.-]*::\*?>[ \t]*"  # NetApp ONTAP: cluster1::> volume offline ...
                     r"|[\w.-]+@[\w.-]+>[ \t]+"
                     r"|[A-Za-z][\w-]* (?:\([\w-]+\) )?#[ \t]+(?=(?:config|execute|diagnose|get|show|set|unset|edit|delete"
                     r"|purge|end|next)\b))")  # FortiOS: `FGT # execute ...` (not `uptime # a comment`)
# Database clients' prompts, and the command line each client would run the rest with.
_CLIENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[ \t]*(?:[\w.-]+[=\-(][#>]|[\w.-]+\([\w.-]+\)=[#>])[ \t]*"), "psql -c"),  # postgres=# db=> db(x)=#
    (re.compile(r"^[ \t]*(?:mysql|mariadb|MariaDB \[[^\]]*\])>[ \t]*", re.IGNORECASE), "mysql -e"),
    (re.compile(r"^[ \t]*(?:redis |valkey )?[\w.-]+:\d{2,5}(?:\[\d+\])?>[ \t]*"), "redis-cli"),  # 127.0.0.1:6379>
    (re.compile(r"^[ \t]*(?:[\w.-]+:(?:PRIMARY|SECONDARY|primary|secondary)|mongos|test|admin)>[ \t]*"), "mongosh --eval"),
    (re.compile(r"^[ \t]*cqlsh(?::[\w.-]+)?>[ \t]*"), "cqlsh -e"),
    (re.compile(r"^[ \t]*SQL>[ \t]*"), "sqlplus-line"),  # Oracle's SQL*Plus: the line is SQL
    (re.compile(r"^[ \t]*\d{1,3}>[ \t]*"), "sqlcmd -Q"),  # sqlcmd's numbered lines
    (re.compile(r"^[ \t]*(?:[\w.-]+@)?(?:\([^)\n]*\))*\(tmos[^)\n]*\)#[ \t]*"), "tmsh"),  # F5: (tmos)#
)


# A MongoDB shell statement written without its prompt: `db.events.drop()`, `rs.stepDown(60)`.
_MONGO_STATEMENT = re.compile(r"^[ \t]*(?:(?:var |let |const )?\w+\s*=\s*)?(?:db|rs|sh)\.[\w$]+.*\)[ \t;]*$")


# An IBM MQ command written without runmqsc around it: `CLEAR QLOCAL(X)`, `ALTER QMGR CONNAUTH(' ')` (upper case
# but for quoted values: `delete from ...` is SQL).
_MQSC_STATEMENT = re.compile(r"^[ \t]*(?:ALTER|CLEAR|DEFINE|DEF|DELETE|STOP|START|RESET|RESOLVE|SET|DISPLAY|DIS|REFRESH"
                             r"|PURGE|SUSPEND|RESUME)\s+(?:QLOCAL|QL|QREMOTE|QR|QALIAS|QA|QMODEL|QMGR|CHANNEL|CHL"
                             r"|LISTENER|LSTR|TOPIC|SUB|SERVICE|CHLAUTH|AUTHINFO|AUTHREC|PROCESS|NAMELIST|QUEUE)\b"
                             r"(?:[^a-z']|'[^']*')*$")


def unprompted(line: str) -> str:
    """The line as the tool behind its prompt would run it (the line unchanged when it has no prompt)."""
    if _MONGO_STATEMENT.match(line):
        return f"mongosh --eval {shlex.quote(line.strip())}"
    if _MQSC_STATEMENT.match(line):
        return f"echo {shlex.quote(line.strip())} | runmqsc"
    shell = _SHELL.match(line)
    if shell:
        return line[shell.end():]
    for prompt, client in _CLIENTS:
        found = prompt.match(line)
        if found and found.end() < len(line):
            rest = line[found.end():]
            if client == "sqlplus-line":
                return rest
            if client in ("redis-cli", "tmsh"):
                return f"{client} {rest}"
            return f"{client} {shlex.quote(rest)}"
    device = _DEVICE.match(line)
    return line[device.end():] if device and device.end() < len(line) else line


def unprompted_text(text: str) -> str:
    """Every line of a pasted session with its prompt read (see `unprompted`)."""
    return "\n".join(unprompted(line) for line in text.split("\n"))
