"""Commands inside commands: sudo, xargs, parallel, ssh, bash -c, python -c, kubectl exec, find -exec, psql -c, ...

`expand` returns an invocation followed by everything it runs, recursively, so a rule about
`rm` also sees `ssh host 'sudo rm -rf /'` and a rule about SQL sees `psql -c "DROP TABLE t"`.
Shells, eval, source and interpreters are read by guardrails.runners; cloud run-command APIs and other
exec tools by guardrails.carriers; xargs and GNU parallel by guardrails.fanout. A package installed from a file
downloaded earlier on the line, and manifests applied from the network, are remote code.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from guardrails.carriers import CARRIERS, as_command, carried, command_start, option_values
from guardrails.fanout import parallel, xargs
from guardrails.foreign import windows_command
from guardrails.ibmi import cl_invocations, looks_like_cl
from guardrails.interpreters import Program
from guardrails.invocation import Invocation, place
from guardrails.resolve import is_parameter
from guardrails.runners import detector, fetches, run, runner, unresolved
from guardrails.shell import parse_shell
from guardrails.sql import looks_like_sql, sql_invocations
from guardrails.streams import CLONED
from guardrails.zos import zos_command

MAX_DEPTH = 6


@dataclass(frozen=True)
class _Prefix:
    """A program that runs the command given in its remaining arguments."""

    value_options: frozenset[str] = frozenset()
    skip: int = 0  # positional words before the command (timeout's duration, chroot's dir)
    dynamic: bool = False  # the command also gets arguments from input


def _p(options: str = "", skip: int = 0, dynamic: bool = False) -> _Prefix:
    return _Prefix(frozenset(options.split()), skip, dynamic)


PREFIXES: dict[str, _Prefix] = {
    "sudo": _p("-u -g -h -p -C -U -r -t -D -R --user --group --host --prompt --chdir --close-from"),
    "doas": _p("-u -C"), "nohup": _p(), "time": _p(), "exec": _p("-a"), "command": _p(), "builtin": _p(),
    "setsid": _p(), "unbuffer": _p(), "stdbuf": _p("-i -o -e"), "nice": _p("-n --adjustment"),
    "ionice": _p("-c -n -p --class --classdata"), "timeout": _p("-s -k --signal --kill-after", skip=1),
    "chroot": _p("--userspec --groups", skip=1), "flock": _p("-w -E --timeout --conflict-exit-code", skip=1),
    "nsenter": _p("-t --target -S -G --setuid --setgid"), "taskset": _p(skip=1),
    "runuser": _p("-u -g -G --user --group"), "env": _p("-u -C -S --unset --chdir --split-string"),
    "xargs": _p("-n -I -P -d -L -s -a -E --max-args --replace --max-procs --delimiter --arg-file --max-lines",
                dynamic=True),
    "busybox": _p(), "systemd-run": _p("-u --unit -p --property -M --machine --uid --gid -E --setenv"),
    "sshpass": _p("-p -f -d -P"), "pkexec": _p("--user"), "unshare": _p("-S -G -R -w --setuid --setgid --root --wd"),
    "proxychains": _p("-f"), "proxychains4": _p("-f"), "torsocks": _p("-u -p -a -P"), "firejail": _p(),
    "strace": _p("-o -e -p -s -u -P -E -I -b"), "ltrace": _p("-o -e -p -s -u -n"), "eatmydata": _p(),
    "fakeroot": _p("-i -s -l"), "gosu": _p(skip=1), "su-exec": _p(skip=1), "s6-setuidgid": _p(skip=1),
    "chpst": _p("-u -U -b -e -/ -n -l -L -m -d -o -p -f -c -r -t"), "setpriv": _p("--reuid --regid --groups"),
    "numactl": _p("-N -m -C -i -p --cpunodebind --membind --physcpubind --interleave --preferred"),
    "cgexec": _p("-g"), "systemd-inhibit": _p("--what --who --why --mode"), "catchsegv": _p(),
    "pfexec": _p("-P"),  # Solaris: run with the profile's privileges
}
INSTALLS: dict[str, frozenset[str]] = {  # package installers, and the words that make them install a file
    "dpkg": frozenset({"-i", "--install", "--unpack"}),
    "rpm": frozenset({"-i", "-U", "-F", "--install", "--upgrade", "--freshen", "--reinstall"}),
    "apt": frozenset({"install", "reinstall"}), "apt-get": frozenset({"install", "reinstall"}),
    "yum": frozenset({"install", "localinstall", "reinstall", "upgrade", "update"}),
    "dnf": frozenset({"install", "localinstall", "reinstall", "upgrade", "update"}),
    "zypper": frozenset({"install", "in"}), "installer": frozenset({"-pkg"}),
    "gdebi": frozenset({"--non-interactive", "-n"}),
    "snap": frozenset({"install"}), "apk": frozenset({"add"}), "pkg": frozenset({"add", "install"}),
}
JAR_VALUES = frozenset("-s -auth -i -p -bearer -user -logger -cp -classpath".split())  # a CLI jar's options with values
SSH_VALUES = frozenset("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B".split())
DOCKER_EXEC_VALUES = frozenset("-u --user -w --workdir -e --env --env-file --detach-keys".split())
DOCKER_RUN_VALUES = DOCKER_EXEC_VALUES | frozenset(
    "-v --volume --mount -p --publish --name --entrypoint --network --net --pid --ipc --uts -h --hostname -l --label "
    "--label-file -m --memory --cpus --cpu-shares -c --restart --add-host --device --cap-add --cap-drop "
    "--security-opt --platform --pull --log-driver --log-opt --ulimit --tmpfs --gpus --runtime --dns --expose "
    "--link --volumes-from --stop-signal --shm-size --userns --sysctl --group-add --memory-swap --pids-limit".split())
SQL_CARRIERS: dict[str, tuple[frozenset[str], str | None]] = {  # database clients: options carrying statements
    "psql": (frozenset({"-c", "--command"}), "postgres"),
    "gitlab-psql": (frozenset({"-c", "--command"}), "postgres"),
    "ysqlsh": (frozenset({"-c", "--command"}), "postgres"),
    "mysql": (frozenset({"-e", "--execute"}), "mysql"),
    "mariadb": (frozenset({"-e", "--execute"}), "mysql"),
    "mysqlsh": (frozenset({"-e", "--execute"}), "mysql"),
    "clickhouse-client": (frozenset({"-q", "--query"}), "clickhouse"),
    "clickhouse": (frozenset({"-q", "--query"}), "clickhouse"),  # clickhouse client ...
    "cockroach": (frozenset({"-e", "--execute"}), "postgres"),
    "sqlite3": (frozenset(), "sqlite"),
    "drush": (frozenset(), "mysql"), "wp": (frozenset(), "mysql"),  # drush sql:query, wp db query
    "plesk": (frozenset(), "mysql"),  # plesk db "STATEMENT": Plesk's own database
    "duckdb": (frozenset({"-c"}), "duckdb"),
    "cqlsh": (frozenset({"-e", "--execute"}), None), "ycqlsh": (frozenset({"-e", "--execute"}), None),
    "sqlcmd": (frozenset({"-Q", "-q", "--query"}), "tsql"),
    "snowsql": (frozenset({"-q", "--query"}), "snowflake"),
    "trino": (frozenset({"--execute"}), "trino"), "presto": (frozenset({"--execute"}), "presto"),
    "spark-sql": (frozenset({"-e"}), "spark"), "hive": (frozenset({"-e"}), "hive"),
    "beeline": (frozenset({"-e"}), "hive"), "impala-shell": (frozenset({"-q", "--query"}), "hive"),
    "vsql": (frozenset({"-c", "--command"}), None), "usql": (frozenset({"-c", "--command"}), None),
    "influx": (frozenset({"-execute", "--execute"}), None),  # InfluxQL: DROP DATABASE, DROP MEASUREMENT
    "bq": (frozenset(), "bigquery"),  # bq query 'SQL'
    "sqlplus": (frozenset(), None),  # statements on stdin, or @FILE
    "db2": (frozenset(), None),  # db2 "DROP DATABASE X": the statement is the argument
    "wrangler": (frozenset({"--command"}), "sqlite"),  # wrangler d1 execute DB --command "..."
    "heroku": (frozenset({"-c", "--command"}), "postgres"),  # heroku pg:psql -c "..."
    "invoke-sqlcmd": (frozenset({"-query", "-Query"}), "tsql"), "rman": (frozenset(), None),  # rman: statements on stdin
    "hdbsql": (frozenset(), None), "dgmgrl": (frozenset(), None),
    "gcloud": (frozenset({"--sql", "--ddl"}), None),  # spanner databases execute-sql / ddl update; sql connect <<< SQL
    "dbaccess": (frozenset(), None), "sqlexp": (frozenset({"-command"}), None),  # Informix (stdin), Progress OpenEdge
    "zowe": (frozenset({"-q", "--query"}), None),  # zowe db2 execute sql --query "..." (Db2 for z/OS)
}
SQL_GATES = {"gcloud": ({"execute-sql"}, {"ddl"}, {"sql", "connect"}),  # the words that make the tool a SQL client
             "zowe": ({"db2", "execute", "sql"},)}
SQL_FILES: dict[str, frozenset[str]] = {  # options naming a file of statements to run (sqlplus: @FILE)
    "psql": frozenset({"-f", "--file"}), "gitlab-psql": frozenset({"-f", "--file"}),
    "ysqlsh": frozenset({"-f", "--file"}), "vsql": frozenset({"-f", "--file"}), "usql": frozenset({"-f", "--file"}),
    "sqlcmd": frozenset({"-i", "--input-file"}), "cqlsh": frozenset({"-f", "--file"}),
    "ycqlsh": frozenset({"-f", "--file"}), "snowsql": frozenset({"-f", "--filename"}),
    "trino": frozenset({"-f", "--file"}), "presto": frozenset({"-f", "--file"}), "spark-sql": frozenset({"-f"}),
    "hive": frozenset({"-f"}), "beeline": frozenset({"-f"}), "impala-shell": frozenset({"-f", "--query_file"}),
    "clickhouse-client": frozenset({"--queries-file"}), "clickhouse": frozenset({"--queries-file"}),
    "mysqlsh": frozenset({"-f", "--file"}), "cockroach": frozenset({"-f", "--file"}),
    "db2": frozenset({"-tvf", "-tf", "-vf", "-f"}), "wrangler": frozenset({"--file"}), "hdbsql": frozenset({"-I"}),
    "rman": frozenset({"cmdfile", "@"}), "invoke-sqlcmd": frozenset({"-inputfile"}),
}
SQL_SUBCOMMAND_ANY = {"wrangler": "execute", "heroku": "pg:psql"}
SQL_SUBCOMMAND_PATH = {"drush": (("sql:query",), ("sql-query",), ("sqlq",)), "wp": (("db", "query"),), "plesk": (("db",),)}  # the word that makes the tool a SQL client
SQL_SUBCOMMAND = {"cockroach": "sql", "clickhouse": "client", "bq": "query"}
LINE_CARRIERS = frozenset({"redis-cli", "valkey-cli", "keydb-cli"})
FLEET_VALUES: dict[str, frozenset[str]] = {  # parallel shells: options taking a value, before the command
    "pdsh": frozenset("-w -x -g -X -l -t -u -f -R -e -F -c -M".split()),
    "pssh": frozenset("-h -H -l -p -o -e -t -x -X -O -P --hosts --host --user --par --outdir --errdir --timeout "
                      "--extra-args --extra-arg --option".split()),
    "clush": frozenset("-w -x -g -X -l -o -f -t -u -O -R -E --nodes --exclude --group --user --options --fanout "
                       "--connect_timeout --command_timeout --option --worker --topology".split()),
}
FLEET_VALUES["parallel-ssh"] = FLEET_VALUES["pssh"]
FLEET_VALUES["allssh"] = FLEET_VALUES["hostssh"] = frozenset()  # Nutanix: every CVM, every host
KNIFE_SSH_VALUES = frozenset("-x --ssh-user -P --ssh-password -a --attribute -C --concurrency -i --ssh-identity-file "
                             "-p --ssh-port -G --ssh-gateway -t --ssh-timeout".split())


def _su(inv: Invocation) -> list[Invocation]:
    """su/runuser -c CMD (or --command=CMD): the command string."""
    scripts = option_values(inv.args, frozenset({"-c", "--command"}))
    if scripts and is_parameter(scripts[0].strip(), positional=True):
        return [detector(inv, "opaque_command")]  # su - app -c "$1": the command is in a variable
    return parse_shell(scripts[0]) if scripts else []


def _ssh(inv: Invocation) -> list[Invocation]:
    start = command_start(inv.args, SSH_VALUES, skip=1)
    while start < len(inv.args) and inv.args[start].startswith("-") and inv.args[start] != "--":
        start += 2 if inv.args[start] in SSH_VALUES else 1  # ssh HOST -t CMD: options after the host
    if start >= len(inv.args):  # no command: the remote login shell reads stdin
        return run(inv, Program("sh", reads_stdin=True))
    remote = " ".join(inv.args[start:])
    if is_parameter(remote.strip(), positional=True):
        return [detector(inv, "opaque_command")]  # ssh HOST "$1": the remote command is in a variable
    inner = parse_shell(remote)
    if inner and inv.stdin_from and inner[0].stdin_from is None:  # ssh host bash <<EOF: the remote command reads it
        inner[0] = replace(inner[0], stdin=inv.stdin, stdin_from=inv.stdin_from)
    return inner


def _fleet(inv: Invocation) -> list[Invocation]:
    """Commands run on many hosts: pdsh/pssh/clush [opts] CMD, knife ssh QUERY CMD, ansible -a CMD, salt cmd.run."""
    args = inv.args
    if inv.program in FLEET_VALUES:
        start = command_start(args, FLEET_VALUES[inv.program])
        return parse_shell(" ".join(args[start:])) if start < len(args) else []
    if inv.program == "knife" and args[:1] == ("ssh",):
        start = command_start(args[1:], KNIFE_SSH_VALUES, skip=1) + 1
        return parse_shell(" ".join(args[start:])) if start < len(args) else []
    if inv.program == "ansible":
        scripts = option_values(args, frozenset({"-a", "--args"}))
        if any(is_parameter(script.strip(), positional=True) for script in scripts):
            return [Invocation(program="ansible", detector="opaque_command")]  # ansible all -m shell -a "$1"
        modules = {m.rsplit(".", 1)[-1] for m in option_values(args, frozenset({"-m", "--module-name"}))}
        if modules & {"file", "win_file"}:
            return [_absent(script) for script in scripts if "state=absent" in script]
        module = next(iter(modules & set(ANSIBLE_MODULES)), None)
        if module is not None:
            return [found for script in scripts if (found := _module(module, script)) is not None]
        return [s for script in scripts for s in parse_shell(script)]
    if inv.program in ("salt", "salt-ssh"):
        return _salt(args)
    return []


# ansible modules and salt functions that do what a command does: the same rules judge them
ANSIBLE_MODULES = {"service": "service", "systemd": "service", "systemd_service": "service", "package": "package",
                   "apt": "package", "yum": "package", "dnf": "package", "zypper": "package", "apk": "package",
                   "pacman": "package", "user": "user", "postgresql_db": "database", "mysql_db": "database"}
SALT_FUNCTIONS = {"service.stop": ("systemctl", "stop"), "service.dead": ("systemctl", "stop"),
                  "service.restart": ("systemctl", "restart"),
                  "service.disable": ("systemctl", "disable"), "pkg.remove": ("apt-get", "remove"),
                  "pkg.purge": ("apt-get", "purge"), "file.remove": ("rm", "-r", "-f"),
                  "system.poweroff": ("poweroff",), "system.halt": ("halt",), "system.reboot": ("reboot",),
                  "user.delete": ("userdel",)}


def _module(module: str, arguments: str) -> Invocation | None:
    """An ansible module call (`-m service -a 'name=sshd state=stopped'`) as the command it amounts to."""
    fields = dict(w.split("=", 1) for w in arguments.replace("'", "").replace('"', "").split() if "=" in w)
    name, state = fields.get("name", ""), fields.get("state", "")
    kind = ANSIBLE_MODULES[module]
    if kind == "service" and (state in ("stopped", "restarted") or fields.get("enabled") in ("no", "false")):
        verb = {"stopped": "stop", "restarted": "restart"}.get(state, "disable")
        return Invocation(program="systemctl", args=(verb, name))
    if kind == "package" and state == "absent":
        return Invocation(program="apt-get", args=("remove", *name.split(",")))
    if kind == "user" and state == "absent":
        return Invocation(program="userdel", args=(("-r",) if fields.get("remove") in ("yes", "true") else ()) + (name,))
    if kind == "database" and state == "absent":
        return next(iter(sql_invocations(f"DROP DATABASE {name}")), None)
    return None


def _salt(args: tuple[str, ...]) -> list[Invocation]:
    """salt TARGET FUNCTION ARGS: cmd.run's command, and the functions that stop, remove or power off."""
    if "cmd.run" in args:
        rest = args[args.index("cmd.run") + 1:]
        if rest and is_parameter(rest[0].strip(), positional=True):
            return [Invocation(program="salt", detector="opaque_command")]  # salt '*' cmd.run "$1": set elsewhere
        return parse_shell(rest[0]) if rest else []
    for n, arg in enumerate(args):
        if arg in SALT_FUNCTIONS:
            rest = tuple(a for a in args[n + 1:] if not a.startswith("-"))
            return [Invocation(program=SALT_FUNCTIONS[arg][0], args=(*SALT_FUNCTIONS[arg][1:], *rest))]
    return []


def _absent(arguments: str) -> Invocation:
    """ansible's file module with state=absent: a recursive delete of its path."""
    fields = dict(w.split("=", 1) for w in arguments.split() if "=" in w)
    return Invocation(program="rm", args=("-r", "-f", fields.get("path") or fields.get("dest") or fields.get("name", "")))


def _exec_in_container(inv: Invocation) -> list[Invocation]:
    args = inv.args
    if inv.program in ("kubectl", "oc") and "--" in args:  # kubectl [-n NS] exec|debug POD -- CMD
        head = args[:args.index("--")]
        return as_command(args[len(head) + 1:], inv) if {"exec", "debug", "run"} & set(head) else []  # run: a new pod's command
    if inv.program in ("docker", "podman", "crictl") and "exec" in args:
        at = args.index("exec") + 1
        return as_command(args[at + command_start(args[at:], DOCKER_EXEC_VALUES, skip=1):], inv)
    if inv.program in ("docker", "podman", "nerdctl") and "run" in args:
        return _run_in_container(inv, args[args.index("run") + 1:])
    return []


def _mounts(options: tuple[str, ...]) -> tuple[list[tuple[str, str]], bool]:
    """Writable host bind mounts (container path, host path) of `docker run`, and whether it reaches the host."""
    mounts, host = [], False
    for i, token in enumerate(options):
        name, _, value = token.partition("=")
        value = value or (options[i + 1] if i + 1 < len(options) else "")
        if token in ("--privileged", "--pid=host", "--net=host", "--network=host") or (name == "--pid" and value == "host"):
            host = True
        elif name in ("-v", "--volume") and value.startswith("/"):
            source, _, rest = value.partition(":")
            target, _, mode = rest.partition(":")
            if target and "ro" not in mode.split(","):
                mounts.append((target.rstrip("/") or "/", source))
        elif name == "--mount" and "bind" in value and "readonly" not in value:
            fields = dict(f.partition("=")[::2] for f in value.split(","))
            source = fields.get("source") or fields.get("src", "")
            target = fields.get("target") or fields.get("dst") or fields.get("destination", "")
            if source.startswith("/") and target:
                mounts.append((target.rstrip("/") or "/", source))
    return mounts, host or bool(mounts)


def _run_in_container(inv: Invocation, rest: tuple[str, ...]) -> list[Invocation]:
    """docker run: what a container that can reach the host runs, its mounted paths read as host paths."""
    start = command_start(rest, DOCKER_RUN_VALUES, skip=1)
    mounts, reaches_host = _mounts(rest[:start])
    if not reaches_host:
        return []  # an ephemeral container with no host path: its files are its own
    entrypoint = option_values(rest[:start], frozenset({"--entrypoint"}))
    words = tuple(entrypoint[-1:]) + rest[start:]
    for target, source in sorted(mounts, key=lambda m: -len(m[0])):
        pattern = re.compile(rf"(?<![\w/.-]){re.escape(target)}(?=/|$|[\s'\"])")
        host = (source.rstrip("/") or "/").replace("\\", "\\\\")
        words = tuple(pattern.sub(host, w) for w in words)
    return as_command(words, inv)


_SCRATCH_ROOTS = re.compile(r"^(/tmp|/var/tmp|/dev/shm)(/[^*?/]+)*/?$|(^|/)(\.cache|cache)(/[^*?/]+)*/?$")
_NAME_FILTERS = ("-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename")
_AGE_FILTERS = ("-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-user", "-size")


def _scratch_match(args: tuple[str, ...]) -> str | None:
    """What find matches when it is confined to scratch (rooted in /tmp or a cache, with a name filter)."""
    roots = [a for a in args[:next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]]
    named = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in _NAME_FILTERS), None)
    aged = any(a in _AGE_FILTERS for a in args)
    named = named if named is not None or not aged else "x"  # -mtime +14, -user batch: old or someone's entries
    if len(roots) != 1 or named is None or ".." in roots[0]:
        return None
    shared = aged and "scratch" in roots[0].split("/")  # an HPC scratch area: old entries are housekeeping, all is not
    if not (_SCRATCH_ROOTS.search(roots[0]) or place(roots[0].rstrip("/")) == "scratch" or shared):
        return None
    return posixpath.join(roots[0], posixpath.basename(named) or "x")


def _find_exec(inv: Invocation) -> list[Invocation]:
    out, args = [], inv.args
    scratch = _scratch_match(args)
    for i, token in enumerate(args):
        if token in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "\\;", "+")), len(args))
            words = args[i + 1:end]
            if scratch:  # {} is a named entry of a scratch directory, not an unknown target
                words = tuple(scratch if w in ("{}", "{+}") else w for w in words)
            inner = as_command(words, replace(inv, redirects=(), stdin=None), dynamic=not scratch)
            if inner and inner[0].program in ("rm", "unlink", "shred"):  # -exec rm {} deletes what it finds
                out.append(replace(inv, args=args[:i] + ("-delete",)))
            out += inner
    return out


# Db2 CLP commands that act on the database: every application thrown off, recovery history and its logs deleted
_DB2_CLP = re.compile(r"(?i)^(?:force\s+applications?\s+all|prune\s+(?:history|logfile)\b.*\band\s+delete\b"
                      r"|deactivate\s+(?:database|db)\b|stop\s+instance\b|update\s+(?:dbm|database\s+manager|db|database)\s+cfg\b"
                      r"|quiesce\s+(?:instance|database|db)\b)")


def _sql(inv: Invocation) -> list[Invocation]:
    names, dialect = SQL_CARRIERS[inv.program]
    positionals = [a for a in inv.args if not a.startswith("-")]
    if inv.program in SQL_SUBCOMMAND and positionals[:1] != [SQL_SUBCOMMAND[inv.program]]:
        return []
    if inv.program in SQL_SUBCOMMAND_PATH and not any(
            tuple(positionals[:len(path)]) == path for path in SQL_SUBCOMMAND_PATH[inv.program]):
        return []
    if inv.program in SQL_GATES and not any(gate <= set(positionals) for gate in SQL_GATES[inv.program]):
        return []
    if inv.program in SQL_SUBCOMMAND_ANY and (SQL_SUBCOMMAND_ANY[inv.program] not in positionals or "--local" in inv.args):
        return []  # (wrangler d1 execute --local: the developer's local copy)
    scripts = option_values(inv.args, names)
    if inv.program in ("sqlite3", "bq"):  # sqlite3 DB 'SQL', bq query 'SQL'
        scripts = [" ".join(positionals[1:])] if len(positionals) > 1 else []
    if inv.program in ("drush", "wp", "plesk"):  # drush sql:query 'SQL', wp db query 'SQL', plesk db 'SQL'
        lead = 2 if inv.program == "wp" else 1
        scripts = [" ".join(positionals[lead:])] if len(positionals) > lead else []
    if inv.program in ("db2", "hdbsql", "dgmgrl"):  # db2 "STATEMENT" (db2 connect to X: a CLP command, not SQL)
        scripts = [p for p in positionals if " " in p and (looks_like_sql(p) or re.match(
            r"(?i)\s*(?:load|import|backup|restore|flashback|alter|grant|disable|edit|switchover|failover|remove)\b", p))]
        scripts += [" ".join(positionals)] if inv.program == "db2" and _DB2_CLP.match(" ".join(positionals)) else []
    names = SQL_FILES.get(inv.program, frozenset())
    files = option_values(inv.args, names) or option_values(  # Invoke-Sqlcmd -InputFile: in any case
        tuple(a.lower() if a.startswith("-") else a for a in inv.args), names)
    files += [p[1:] for p in positionals if inv.program == "sqlplus" and p.startswith("@") and len(p) > 1]
    if inv.stdin and inv.stdin_from != "remote":
        scripts.append(inv.stdin)
    if any(fetches(script) for script in scripts):
        return [detector(inv, "remote_code")]  # mongosh/psql --eval "$(curl URL)"
    if any(is_parameter(script.strip(), positional=True) for script in scripts + files):
        return [detector(inv, "opaque_command")]  # psql -c "$SQL": the statement is in a variable
    if inv.stdin_from == "remote" and not scripts:
        return [detector(inv, "remote_code")]  # curl URL | psql: statements from the network
    if inv.stdin_from == "decoded" and inv.stdin:  # echo B64 | base64 -d | psql: statements hidden in an encoding (not zcat dump.gz)
        return [detector(inv, "encoded_code"), *sql_invocations(inv.stdin or "")]
    if any(re.match(r"\s*(?:SOURCE|\\\.|\\i|\\ir|\\include)\s+\S", s, re.IGNORECASE) or _read_from_file(s)
           for s in scripts):
        return [detector(inv, "unseen_script")]  # mysql -e "SOURCE /tmp/hotfix.sql", psql -c '\i fix.sql', "$(cat x)"
    if inv.stdin_from == "program" and inv.feed and (
            (inv.feed[0] in ("mysqldump", "mariadb-dump") and "--skip-add-drop-table" not in inv.feed)
            or (inv.feed[0] == "pg_dump" and {"-c", "--clean"} & set(inv.feed))):
        return [Invocation(program="sql", sql=frozenset({"restored_over"}))]  # a dump that drops the target's tables
    if files or (inv.stdin_from == "file" and not scripts):
        return [detector(inv, "unseen_script")]  # psql -f fix.sql, mysql db < fix.sql: what it changes is not shown
    return [s for script in scripts for s in sql_invocations(script, dialect)]


# Clients that run a file of commands against a live system: options naming the file, or their input.
FILE_READERS: dict[str, frozenset[str]] = {
    "mongosh": frozenset({"-f", "--file"}), "mongo": frozenset({"-f", "--file"}),
    "redis-cli": frozenset(), "valkey-cli": frozenset(), "keydb-cli": frozenset(),
    "etcdctl": frozenset(), "invoke-sqlcmd": frozenset({"-inputfile"}), "diskpart": frozenset({"/s"}),
    "runmqsc": frozenset({"-f"}), "ldapmodify": frozenset({"-f"}), "ldapadd": frozenset({"-f"}),
    "clish": frozenset({"-f"}),
}


def _file_reader(inv: Invocation) -> list[Invocation]:
    """`mongosh --file repair.js`, `mongosh db fix.js`, `redis-cli < commands.txt`, `diskpart /s plan.txt`."""
    names = FILE_READERS[inv.program]
    files = option_values(tuple(a.lower() if a.startswith(("-", "/")) else a for a in inv.args), names)
    if inv.program in ("mongosh", "mongo"):
        files += [a for a in inv.args if a.endswith(".js") and not a.startswith("-")]
        evals = option_values(inv.args, frozenset({"--eval"}))
        if any(fetches(code) for code in evals):
            return [detector(inv, "remote_code")]  # mongosh --eval "$(curl -s URL)"
        if any(is_parameter(code.strip(), positional=True) for code in evals):
            return [detector(inv, "opaque_command")]  # mongosh --eval "$JS"
    if files and any(is_parameter(f.strip(), positional=True) for f in files):
        return [detector(inv, "opaque_command")]
    if files or (inv.stdin_from == "file" and (inv.program != "etcdctl" or "txn" in inv.args)):
        return [detector(inv, "unseen_script")]
    return []


def _read_from_file(code: str) -> bool:
    """Code that is a file's contents, read by a substitution: `"$(cat fix.sql)"`, `` `cat x` ``, `$(< x)`."""
    return bool(re.fullmatch(r"\s*(?:\$\((?:cat\s+|<\s*)[^()]+\)|`cat\s+[^`]+`)\s*", code))


def _installs_download(inv: Invocation) -> list[Invocation]:
    """A package installed from a file downloaded earlier on the line, with no checksum check: its scripts run."""
    words = set(inv.args) | {f"-{c}" for a in inv.args if a.startswith("-") and not a.startswith("--") for c in a[1:]}
    files = [a for a in inv.args if not a.startswith("-") and posixpath.basename(a) in inv.fetched]
    installs = INSTALLS[inv.program] & words or inv.program == "gdebi"
    return [detector(inv, "remote_code")] if files and installs and not {"-q", "--query"} & words else []


def _fetched_manifests(inv: Invocation) -> list[Invocation]:
    """kubectl apply/create of manifests read from the network (`curl URL | kubectl apply -f -`, `-f <(curl URL)`)."""
    if not {"apply", "create", "replace"} & set(inv.args):
        return []
    sources = option_values(inv.args, frozenset({"-f", "--filename", "-k", "--kustomize"}))
    remote = any(fetches(s) for s in sources) or ("-" in sources and inv.stdin_from == "remote")
    return [detector(inv, "remote_code")] if remote else []


# a script's text read into an argument: `bash -c "$(cat fix.sh)"`, `EVAL "$(cat fix.lua)" 0`, `script=$(cat x.groovy)`
_CODE_READ = re.compile(r"\$\((?:cat\s+|<\s*)[^()\s]+\.(?:sh|bash|py|rb|pl|groovy|lua|js|ps1|sql|cql|jcl|tcl|php|rman"
                        r"|clish)\s*\)|`cat\s+[^`\s]+\.(?:sh|bash|py|rb|pl|groovy|lua|js|ps1|sql|cql|tcl)\s*`")
_SHOWS_ONLY = frozenset({"echo", "printf", "cat", "less", "more", "head", "tail", "wc", "diff", "grep", "sha256sum",
                         "md5sum", "base64", "shellcheck", "bat", "vim", "vi", "nano", "view"})


_READS_TREE = _SHOWS_ONLY | {"git", "ls", "find", "tree", "cd", "pwd", "du", "stat", "file", "rg", "ag", "sed", "awk"}


def _uses_clone(inv: Invocation) -> bool:
    """Whether a command builds, installs or runs from a public repository cloned earlier on the line."""
    clones = {f[len(CLONED):] for f in inv.fetched if f.startswith(CLONED)}
    if not clones or inv.program in _READS_TREE or inv.detector:
        return False
    parts = {p for word in (inv.program, *inv.args, inv.cwd or "") for p in re.split(r"[/\\=]", word)}
    return "." in clones or bool(parts & clones)


def _unwrap(inv: Invocation) -> list[Invocation]:
    program, args = inv.program, inv.args
    unknown = unresolved(inv)
    if unknown is not None:
        return unknown
    if program not in _SHOWS_ONLY and not inv.detector and any(_CODE_READ.search(a) for a in args):
        return [detector(inv, "unseen_script")]  # the code is a file's text, not on the line
    mainframe = zos_command(inv)
    if mainframe is not None:
        return mainframe
    if program == "system" and args and looks_like_cl(args[-1]):  # IBM i PASE: system "CLRPFM FILE(X)"
        return cl_invocations(args[-1])
    if _uses_clone(inv):
        return [detector(inv, "remote_code")]  # git clone github.com/someone/x && cd x && make install
    if program in PREFIXES:
        spec = PREFIXES[program]
        before = args[:args.index("--")] if "--" in args else args  # runuser -u U -- psql -c SQL: psql's -c
        if program == "runuser" and any(a in ("-c", "--command") for a in before):
            return _su(inv)
        start = command_start(args, spec.value_options, spec.skip)
        if program == "xargs":
            return xargs(inv, start)
        if start >= len(args) and program in ("sudo", "doas") and inv.stdin_from:
            return run(inv, Program("sh", reads_stdin=True))  # sudo -i <<EOF: a root shell reads the heredoc
        return as_command(args[start:], inv, spec.dynamic)
    if program in ("su", "sg", "script"):  # su -c CMD, sg GROUP -c CMD, script -c CMD
        if program == "su" and inv.stdin_from and not any(a in ("-c", "--command") or a.startswith("--command=")
                                                          for a in args):
            return run(inv, Program("sh", reads_stdin=True))  # su - postgres <<EOF: the user's shell reads it
        return _su(inv)
    if program == "parallel":
        return parallel(inv)
    code = runner(inv)
    if code is not None:
        return code
    windows = windows_command(inv)
    if windows is not None and windows != inv:
        return [windows]
    if program in ("eval", "watch"):
        return parse_shell(" ".join(args[command_start(args, frozenset({"-n", "--interval"})):]))
    if program == "ssh":
        return _ssh(inv)
    if program == "find":
        return _find_exec(inv)
    if program in ("knife", "ansible", "salt", "salt-ssh") or program in FLEET_VALUES:
        return _fleet(inv)
    if program == "bundle" and args[:1] == ("exec",):
        return as_command(args[1:], inv)
    if program == "java" and "-jar" in args[:-1]:  # java -jar jenkins-cli.jar ... delete-job: the jar is the tool
        at = args.index("-jar")
        jar = posixpath.basename(args[at + 1])
        rest = args[at + 2:]
        start = command_start(rest, JAR_VALUES)  # its connection options first: -s URL -auth @creds
        return as_command((jar[:-4] if jar.endswith(".jar") else jar, *rest[start:]), inv)
    if program in SQL_CARRIERS:
        statements = _sql(inv)
        if statements or program not in CARRIERS:  # (heroku pg:psql carries SQL, heroku run a command)
            return statements
    if program in FILE_READERS:
        found = _file_reader(inv)
        if found:
            return found
    if program in LINE_CARRIERS and inv.stdin:
        lines = [line.split() for line in inv.stdin.splitlines() if line.strip()]
        return [Invocation(program=program, args=tuple(words)) for words in lines]
    if program in INSTALLS:
        return _installs_download(inv)
    if program in ("kubectl", "oc"):
        manifests = _fetched_manifests(inv)
        if manifests:
            return manifests
    carrying = carried(inv)
    return carrying if carrying is not None else (_exec_in_container(inv) or _carried_in_arguments(inv))


# Options through which tools that are not in SQL_CARRIERS take a statement: Aerospike's aql -c, Couchbase's cbq -s,
# ksqlDB's ksql -e, Databricks' dbsqlcli -e, Vitess' ApplySchema --sql, DynamoDB's execute-statement --statement,
# dbatools' Invoke-DbaQuery -Query.
_STATEMENT_OPTIONS = frozenset({"-e", "-c", "-s", "-q", "-Q", "--sql", "--statement", "--query", "-query", "-Query",
                                "--execute", "-execute", "--command", "-command", "--eval"})
_NOT_STATEMENTS = frozenset({"grep", "egrep", "rg", "git", "echo", "printf", "logger", "jq", "yq", "awk", "sed", "find",
                             "gh", "glab", "jira", "curl", "wget", "http", "ssh", "sudo", "su", "bash", "sh", "zsh",
                             "python", "python3", "perl", "ruby", "node", "mongosh", "mongo", "redis-cli", "kubectl",
                             "select-string", "findstr", "where-object", "get-content", "write-output", "write-host"})


def _carried_in_arguments(inv: Invocation) -> list[Invocation]:
    """What a tool no table here knows carries in its arguments: an SQL statement in a query option, else a
    command of consequence in a quoted argument."""
    if inv.program.lower() in _NOT_STATEMENTS or inv.sql or inv.program in ("sql", "trap") or inv.detector:
        return []  # (an SQL statement's own text; a trap's cleanup handler)
    return _statement_in_option(inv) or _command_in_argument(inv)


def _statement_in_option(inv: Invocation) -> list[Invocation]:
    """An SQL statement given to some tool's query option (`aql -c "TRUNCATE bidder"`), read as SQL."""
    values = [v.strip() for v in option_values(inv.args, _STATEMENT_OPTIONS)]
    return [found for v in values if " " in v and looks_like_sql(v) for found in sql_invocations(v)]


# A remote or fan-out tool this module does not know (`isi_for_array -s 'shutdown -p now'`, `xdsh compute 'systemctl
# stop slurmd'`, `dcli -g cells -l root "cellcli -e drop griddisk all"`, `tmux send-keys -t db 'DROP DATABASE app;'
# Enter`): a quoted argument that is itself a command of consequence is read as the command it is.
_CONSEQUENTIAL = frozenset({"rm", "dd", "shutdown", "reboot", "halt", "poweroff", "init", "systemctl", "service", "kill",
                            "killall", "pkill", "wipefs", "sgdisk", "parted", "fdisk", "mkfs", "zpool", "zfs", "lvremove",
                            "vgremove", "pvremove", "mdadm", "iptables", "nft", "ufw", "chmod", "chown", "userdel",
                            "truncate", "shred", "cellcli"})  # (a console's own verbs: verbs.py reads those)
_MESSAGE_OPTIONS = frozenset({"-m", "--message", "--comment", "--description", "--reason", "--title", "--body", "--note",
                              "--summary", "--subject", "-t", "--text", "--msg"})


def _command_in_argument(inv: Invocation) -> list[Invocation]:
    """The quoted arguments that are statements or commands of consequence, read as what they are."""
    args = inv.args
    out: list[Invocation] = []
    for n, arg in enumerate(args):
        text = re.sub(r"(?:\\n)+$", "", arg.strip()).strip()  # (screen's `stuff $'CMD\n'`: the Enter typed)
        if " " not in text or (n and args[n - 1] in _MESSAGE_OPTIONS) or arg.startswith("-"):
            continue
        first = text.split(None, 1)[0].lower().rstrip(";")
        if looks_like_sql(text) and first in ("drop", "truncate", "delete", "alter", "update"):
            out += sql_invocations(text)
        elif first.split(".")[0] in _CONSEQUENTIAL:
            out += parse_shell(text)  # (it falls back to a plain reader; it does not raise)
    return out


def expand(inv: Invocation, depth: int = 0, rehearses: Callable[[Invocation], bool] | None = None) -> list[Invocation]:
    """The invocation and, recursively, every command or SQL statement it runs; a carrier that only
    rehearses (`rehearses`: parallel --dry-run, ansible --check) runs nothing it carries."""
    out = [inv]
    if depth < MAX_DEPTH and not (rehearses and rehearses(inv)):
        for inner in _unwrap(inv):
            out.extend(expand(inner, depth + 1, rehearses))
    return out
