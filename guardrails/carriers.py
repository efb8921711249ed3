"""Commands carried in another tool's arguments: where a wrapped command starts, and the tools that run one elsewhere.

Cloud run-command APIs carry a script in an option (`aws ssm send-command --parameters commands=[...]`,
`az vm run-command invoke --scripts ...`, `aws ecs execute-command --command ...`); exec and ssh-like tools
carry it after a name (`docker-compose exec SERVICE CMD`, `lxc exec VM -- CMD`, `heroku run CMD`), and
credential wrappers after `--` (`aws-vault exec PROFILE -- CMD`). What they carry is read like any command.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from guardrails.foreign import powershell
from guardrails.invocation import Invocation
from guardrails.resolve import closing, is_parameter
from guardrails.shell import parse_shell, program_name


def command_start(args: tuple[str, ...], value_options: frozenset[str], skip: int = 0) -> int:
    """Index of the first word of the wrapped command (len(args) when there is none)."""
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            i += 1
            break
        if token.startswith("-") and token != "-":
            clustered = re.fullmatch(r"-[A-Za-z]{2,}", token) and f"-{token[-1]}" in value_options  # -bw HOSTS
            i += 2 if token in value_options or clustered else 1
            continue
        if "=" in token and token.split("=", 1)[0].isidentifier():  # env NAME=value
            i += 1
            continue
        break
    skipped = args[i:i + skip]
    spoken = next((n for n, word in enumerate(skipped) if n and re.search(r"\s", word.strip())), None)
    return min(i + (spoken if spoken is not None else skip), len(args))  # (`balena ssh DEV "CMD"`: no service named)


def option_values(args: tuple[str, ...], names: frozenset[str], many: bool = False) -> list[str]:
    """Values of options like -c SQL, --command=SQL and attached short forms (-eSQL); with many, every word up to
    the next option (az --scripts A B)."""
    values = []
    for i, token in enumerate(args):
        name, eq, value = token.partition("=")
        if name in names and eq:
            values.append(value)
        elif token in names and i + 1 < len(args):
            end = i + 2
            while many and end < len(args) and not args[end].startswith("-"):
                end += 1
            values.extend(args[i + 1:end])
        elif not token.startswith("--") and token[:2] in names and len(token) > 2:
            values.append(token[2:])
    return values


def as_command(words: tuple[str, ...], parent: Invocation, dynamic: bool = False) -> list[Invocation]:
    """The command an argv runs, inheriting its parent's input, redirects and directory."""
    if not words:
        return []
    return [Invocation(program=program_name(words[0]), args=words[1:], redirects=parent.redirects,
                       stdin=parent.stdin, stdin_from=parent.stdin_from, cwd=parent.cwd,
                       fetched=parent.fetched, dynamic=parent.dynamic or dynamic, feed=parent.feed,
                       source=parent.source)]


@dataclass(frozen=True)
class Carrier:
    """Where a tool carries the command it runs (every field is optional)."""

    path: tuple[str, ...] = ()  # words that select the subcommand (ssm, send-command), in any position
    options: frozenset[str] = frozenset()  # options whose values are command text (--command, --scripts)
    many: bool = False  # those options take several values
    values: frozenset[str] = frozenset()  # options taking a value, before a command given as the rest
    skip: int = -1  # positional words before a command given as the rest (the service, the VM); -1: no rest
    dashes: bool = False  # the command follows `--`
    shell: bool = False  # the rest is read by a (remote) shell: its words are joined and parsed


def _c(path: str = "", options: str = "", values: str = "", skip: int = -1, dashes: bool = False,
       shell: bool = False, many: bool = False) -> Carrier:
    return Carrier(tuple(path.split()), frozenset(options.split()), many, frozenset(values.split()), skip, dashes,
                   shell)


CARRIERS: dict[str, tuple[Carrier, ...]] = {
    "aws": (_c("ecs execute-command", "--command"),),  # ssm send-command: see _ssm
    "az": (_c("run-command invoke", "--scripts", many=True), _c("run-command create", "--script"),
           _c("run-command update", "--script"), _c("aks command invoke", "--command")),
    "gcloud": (_c("ssh", "--command"), _c("ssh", dashes=True, shell=True)),  # gcloud compute ssh VM -- CMD
    "vagrant": (_c("ssh", "-c --command"),),
    "fly": (_c("ssh console", "-C --command"),), "flyctl": (_c("ssh console", "-C --command"),),
    "cf": (_c("ssh", "-c --command"),), "eb": (_c("ssh", "-c --command"),),
    "doctl": (_c("compute ssh", "--ssh-command"),),
    "heroku": (_c("run", values="-a --app -s --size -e --env -r --remote --type", skip=0, shell=True, dashes=True),
               _c("run:detached", values="-a --app -s --size -e --env -r --remote --type", skip=0, shell=True)),
    "balena": (_c("ssh", skip=2, shell=True),),  # balena ssh DEVICE [SERVICE] "CMD"
    "ray": (_c("job submit", dashes=True),),  # ray job submit --address URL -- CMD
    "tsh": (_c("ssh", values="-l --login -p --port --proxy --cluster", skip=1, shell=True),),
    "mosh": (_c(dashes=True, shell=True),),
    "hcloud": (_c("server ssh", values="-u --user -p --port", skip=1, shell=True),),
    "docker-machine": (_c("ssh", skip=1, shell=True),),
    "docker-compose": (_c("exec", values="-u --user -w --workdir -e --env --index", skip=1),
                       _c("run", values="-u --user -w --workdir -e --env -v --volume --name --entrypoint", skip=1)),
    "podman-compose": (_c("exec", values="-u --user -w --workdir -e --env --index", skip=1),),
    "nerdctl": (_c("exec", values="-u --user -w --workdir -e --env", skip=1),),
    "lxc": (_c("exec", values="--env --cwd --user --group --mode", skip=1, dashes=True),),
    "incus": (_c("exec", values="--env --cwd --user --group --mode", skip=1, dashes=True),),
    "lxc-attach": (_c(dashes=True),), "multipass": (_c("exec", skip=1, dashes=True),),
    "pct": (_c("exec", skip=1, dashes=True),), "qm": (_c("guest exec", skip=1, dashes=True),),
    "distrobox": (_c("enter", dashes=True),), "toolbox": (_c("run", values="-c --container", skip=0),),
    "oc": (_c("rsh", values="-c --container -n --namespace --shell", skip=1),),
    "nomad": (_c("alloc exec", values="-task -job -namespace -region -address -e", skip=1),),
    "machinectl": (_c("shell", values="--setenv -E --uid", skip=1, shell=True),),
    "jexec": (_c(values="-u -U", skip=1),), "limactl": (_c("shell", values="--workdir", skip=1),),
    "ctr": (_c("task exec", values="--exec-id --cwd --user -u --env", skip=1),),
    "consul": (_c("exec", values="-node -service -tag -datacenter -http-addr -token -prefix -wait", skip=0,
                  shell=True),),
    # HPC: a job step on many nodes (srun [opts] CMD), a batch job's one-liner (sbatch --wrap=CMD), MPI's launcher,
    # a container's command (apptainer exec [opts] IMAGE CMD)
    "srun": (_c(values="-N --nodes -n --ntasks -w --nodelist -x --exclude -p --partition -t --time -A --account "
                       "-J --job-name -c --cpus-per-task --mem -o --output -e --error --gres -G --gpus -q --qos "
                       "--ntasks-per-node --reservation -C --constraint", skip=0),),
    "sbatch": (_c(options="--wrap"),), "qsub": (_c(dashes=True),),  # PBS: qsub [opts] -- CMD
    "pyinfra": (_c("exec", dashes=True),),  # pyinfra INVENTORY exec -- CMD
    "zowe": (_c("zos-uss issue ssh", skip=0, shell=True), _c("zos-uss issue command", skip=0, shell=True)),
    "schtasks": (_c(options="/tr /TR /Tr"),),  # schtasks /create ... /tr "CMD": what the task will run
    "mpirun": (_c(values="-np -n -H --host -hostfile --hostfile -machinefile --map-by -x", skip=0),),
    "mpiexec": (_c(values="-np -n -H --host -hostfile --hostfile -machinefile --map-by -x", skip=0),),
    "apptainer": (_c("exec", values="-B --bind -H --home --env --env-file --overlay -W --workdir --pwd --security "
                                    "--network --hostname --app", skip=1),),
    "singularity": (_c("exec", values="-B --bind -H --home --env --env-file --overlay -W --workdir --pwd --security "
                                      "--network --hostname --app", skip=1),),
    "salt-ssh": (_c("cmd.run", skip=0, shell=True),), "salt-call": (_c("cmd.run", skip=0, shell=True),),
    "mussh": (_c(options="-c"),), "fab": (_c(dashes=True, shell=True),),
    "bolt": (_c("command run", values="-t --targets -u --user --run-as", skip=0, shell=True),),
    "mssh": (_c(values="-u --profile -r --region -z --zone -t --target", skip=1, shell=True),),
    # credential and environment wrappers: the command follows `--` (or the profile)
    "aws-vault": (_c("exec", dashes=True),), "op": (_c("run", dashes=True),), "doppler": (_c("run", dashes=True),),
    "infisical": (_c("run", dashes=True),), "chamber": (_c("exec", dashes=True),),
    "saml2aws": (_c("exec", dashes=True),), "envchain": (_c(skip=1),), "direnv": (_c("exec", skip=1),),
    "sops": (_c("exec-env", skip=1, shell=True),), "dbus-run-session": (_c(dashes=True, skip=0),),
    "screen": (_c(values="-S -dmS -mdS -DmS -c -L -Logfile -p -T -e -h", skip=0),),  # screen -dmS NAME CMD
    "tmux": (_c("new-session", values="-s -n -c -t -x -y -e -F", skip=0, shell=True),
             _c("new", values="-s -n -c -t -x -y -e -F", skip=0, shell=True),
             _c("new-window", values="-n -c -t -e -F", skip=0, shell=True)),
}
_POWERSHELL_DOCUMENTS = re.compile(r"(?i)powershell")  # AWS-RunPowerShellScript, RunPowerShellScript
_SSM_KEYS = re.compile(r"\bcommands?=")


def _ssm(value: str) -> list[str]:
    """The commands of `aws ssm send-command --parameters`: JSON, or shorthand commands=[...] / commands="..."."""
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    if isinstance(data, dict):
        found = data.get("commands", data.get("command", []))
        return [found] if isinstance(found, str) else [c for c in found if isinstance(c, str)]
    key = _SSM_KEYS.search(value)
    if key is None:
        return []
    rest = value[key.end():]
    if rest.startswith("["):
        inner = rest[:closing(rest, 1, "[", "]")]
        try:
            items = json.loads(inner)
        except ValueError:
            items = [item.strip().strip("'\"") for item in inner[1:-1].split(",")]
        return [item for item in items if isinstance(item, str)]
    if rest[:1] in ("'", '"'):
        end = rest.find(rest[0], 1)
        return [rest[1:end if end > 0 else None]]
    return [rest]


def _scripts(inv: Invocation, texts: list[str]) -> list[Invocation]:
    """Script text run on a machine: PowerShell when the run-command document says so, else a shell."""
    windows = any(_POWERSHELL_DOCUMENTS.search(a) for a in inv.args)
    texts = [t for t in texts if not t.startswith(("@", "file://", "fileb://"))]  # a local file: not known
    if any(is_parameter(t.strip(), positional=True) for t in texts):  # --command "$1": in a variable
        return [Invocation(program=inv.program, detector="opaque_command")]
    return [found for text in texts for found in (powershell(text) if windows else parse_shell(text))]


def _rest(inv: Invocation, carrier: Carrier) -> list[Invocation]:
    args = inv.args
    if carrier.dashes and "--" in args:
        words = args[args.index("--") + 1:]
    elif carrier.skip >= 0:
        at = max((args.index(word) + 1 for word in carrier.path), default=0)
        words = args[at + command_start(args[at:], carrier.values, carrier.skip):]
    else:
        return []
    if carrier.shell:  # (the remote shell splits a quoted argument again; the writer meant it as one: read both)
        quoted = [shlex.quote(w) if re.search(r"[\s()<>|;&\"']", w) else w for w in words]
        return parse_shell(" ".join(words)) + (parse_shell(" ".join(quoted)) if quoted != list(words) else [])
    return as_command(words, inv)


def _cmd_exe(inv: Invocation) -> list[Invocation]:
    """`cmd /c COMMAND` (or /k): the rest of the line is the command."""
    at = next((i for i, a in enumerate(inv.args) if a.lower() in ("/c", "/k")), None)
    return parse_shell(" ".join(inv.args[at + 1:])) if at is not None and at + 1 < len(inv.args) else []


# Hadoop's file system shell names POSIX commands as options (`hdfs dfs -rm -r /data`, `hadoop fs -chmod -R 777 /x`):
# read as those commands on the cluster's paths.
_FS_SHELLS = {"hdfs": ("dfs",), "hadoop": ("fs", "dfs")}
_FS_COMMANDS = {"-rm": ("rm",), "-rmr": ("rm", "-r"), "-rmdir": ("rmdir",), "-chmod": ("chmod",),
                "-chown": ("chown",), "-chgrp": ("chgrp",), "-setfacl": ("setfacl",), "-mv": ("mv",),
                "-truncate": ("truncate",)}


def _fs_shell(inv: Invocation) -> list[Invocation] | None:
    args = inv.args
    if len(args) < 2 or args[0] not in _FS_SHELLS.get(inv.program, ()) or args[1] not in _FS_COMMANDS:
        return None
    rest = tuple(a for a in args[2:] if a not in ("-skipTrash", "-safely"))
    return as_command((*_FS_COMMANDS[args[1]], *rest), inv)


def carried(inv: Invocation) -> list[Invocation] | None:
    """What a carrier tool runs; None when the invocation carries no command."""
    if inv.program.lower() in ("cmd", "cmd.exe"):
        return _cmd_exe(inv)
    if inv.program in _FS_SHELLS:
        return _fs_shell(inv)
    if inv.program == "aws" and "ssm" in inv.args and {"send-command", "start-session", "create-association",
                                                         "update-association"} & set(inv.args):
        return _scripts(inv, [c for value in option_values(inv.args, frozenset({"--parameters"}))
                              for c in _ssm(value)])
    matching = [c for c in CARRIERS.get(inv.program, ()) if all(word in inv.args for word in c.path)]
    if not matching:
        return None
    return [found for carrier in matching for found in (
        _scripts(inv, option_values(inv.args, carrier.options, carrier.many)) if carrier.options
        else _rest(inv, carrier))]
