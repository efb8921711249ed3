"""Pasted prompts: a terminal or a database client's prompt in front of what was typed.

People paste terminal sessions: `[root@mongo-02 ~]# rm -rf /var/lib/mongodb`, `user@db:~$ sudo
reboot`, `PS C:\\> Format-Volume -DriveLetter D`, `C:\\> rd /s /q C:\\`, `postgres=# TRUNCATE
payments;`, `mysql> RESET MASTER;`, `127.0.0.1:6379> FLUSHDB`, `rs0:PRIMARY> db.events.drop()`,
`cqlsh> TRUNCATE app.events;`, `SQL> DROP USER app CASCADE;`. The prompt says which tool reads the
line: a shell prompt is dropped, a database client's prompt turns the line into that client's
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
# Database clients' prompts, and the command line each client would run the rest with.
_CLIENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[ \t]*(?:[\w.-]+[=\-(][#>]|[\w.-]+\([\w.-]+\)=[#>])[ \t]*"), "psql -c"),  # postgres=# db=> db(x)=#
    (re.compile(r"^[ \t]*(?:mysql|mariadb|MariaDB \[[^\]]*\])>[ \t]*", re.IGNORECASE), "mysql -e"),
    (re.compile(r"^[ \t]*(?:redis |valkey )?[\w.-]+:\d{2,5}(?:\[\d+\])?>[ \t]*"), "redis-cli"),  # 127.0.0.1:6379>
    (re.compile(r"^[ \t]*(?:[\w.-]+:(?:PRIMARY|SECONDARY|primary|secondary)|mongos|test|admin)>[ \t]*"), "mongosh --eval"),
    (re.compile(r"^[ \t]*cqlsh(?::[\w.-]+)?>[ \t]*"), "cqlsh -e"),
    (re.compile(r"^[ \t]*SQL>[ \t]*"), "sqlplus-line"),  # Oracle's SQL*Plus: the line is SQL
    (re.compile(r"^[ \t]*\d{1,3}>[ \t]*"), "sqlcmd -Q"),  # sqlcmd's numbered lines
)


def unprompted(line: str) -> str:
    """The line as the tool behind its prompt would run it (the line unchanged when it has no prompt)."""
    shell = _SHELL.match(line)
    if shell:
        return line[shell.end():]
    for prompt, client in _CLIENTS:
        found = prompt.match(line)
        if found and found.end() < len(line):
            rest = line[found.end():]
            if client == "sqlplus-line":
                return rest
            if client == "redis-cli":
                return f"redis-cli {rest}"
            return f"{client} {shlex.quote(rest)}"
    return line


def unprompted_text(text: str) -> str:
    """Every line of a pasted session with its prompt read (see `unprompted`)."""
    return "\n".join(unprompted(line) for line in text.split("\n"))
