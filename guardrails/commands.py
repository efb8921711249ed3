"""The dangerous-command check: parse a command (shell or SQL), unwrap it, match the policy's rules."""

from __future__ import annotations

import re
from dataclasses import replace
from fnmatch import fnmatchcase
from functools import lru_cache

from guardrails import learned
from guardrails.ibmi import cl_invocations, looks_like_cl
from guardrails.exposure import exposures
from guardrails.extraction import extract_commands
from guardrails.foreign import looks_like_powershell, powershell
from guardrails.invocation import Invocation, mask_placeholders, read_args, target_class
from guardrails.listings import listed
from guardrails.policy import Policy, Rule, default_policy
from guardrails.repl import unprompted_text
from guardrails.resolve import is_parameter
from guardrails.runners import code_in_variable
from guardrails.schedules import scheduled
from guardrails.shell import parse_shell
from guardrails.sql import looks_like_sql, sql_invocations
from guardrails.streams import literal_output
from guardrails.switches import copies_cut, environment_switched_off, retention_cut, switched_down, switched_off
from guardrails.verbs import (DESTROYS, HTTP_CLIENTS, MAX_LEADING, READ_PROGRAMS, READS, TAKES_DOWN, any_source_allowed,
                              device_opened, everyone_granted, http_method, leading_words, parts, verb_effect)
from guardrails.verdict import Finding, Verdict, rank
from guardrails.wrappers import MAX_DEPTH, PREFIXES, expand
from guardrails.zos import bare_zos


def invocations(command: str, policy: Policy | None = None, *, later: bool = True) -> list[Invocation]:
    """Every simple command and SQL statement a command line runs, wrappers unwrapped (with a policy,
    not the ones its dry-run flags say only rehearse); with `later`, also the commands it schedules
    in a crontab."""
    text = mask_placeholders(unprompted_text(command))
    if looks_like_sql(text):
        top = sql_invocations(text)
    elif (mainframe := bare_zos(text)) is not None:  # (before PowerShell: `$PJES2,ABEND` is JES2's, not a variable)
        top = mainframe
    elif looks_like_powershell(text):
        top = powershell(text)
    elif looks_like_cl(text):
        top = cl_invocations(text)
    else:
        top = parse_shell(text)
    rehearses = (lambda inv: _dry_run(inv, policy)) if policy is not None else None
    found = [inner for inv in top for inner in expand(inv, rehearses=rehearses)]
    found += [inv for entry in (scheduled(found) if later else []) for inv in invocations(entry, policy, later=False)]
    switched = environment_switched_off(text)
    return found + exposures(found) + ([Invocation(detector="security_switched_off", args=(switched,))] if switched else [])


def _any(values: frozenset[str] | tuple[str, ...], patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(v, p) for v in values for p in patterns)


@lru_cache(maxsize=65536)
def _named(program: str, patterns: tuple[str, ...]) -> bool:
    """Whether a program name matches a rule's program patterns (cached: every rule asks for every command)."""
    return any(fnmatchcase(program, p) for p in patterns)


_HELP_WORDS = frozenset({"help", "-usage", "--usage", "-help", "/?", "-?"})


_DRY_RUNS: dict[tuple[int, Invocation], tuple[Policy, bool]] = {}  # (the policy is kept so its id is not reused)


def _dry_run(inv: Invocation, policy: Policy) -> bool:
    """A dry-run flag: one every program reads so (--dry-run), or this program's own (rsync -n); or a
    request for the tool's help on a verb (`nodetool help decommission`, `aws rds delete-db-cluster help`).
    Memoised: every rule asks it of every command."""
    key = (id(policy), inv)
    known = _DRY_RUNS.get(key)
    if known is None or known[0] is not policy:
        if len(_DRY_RUNS) >= 4096:
            _DRY_RUNS.clear()
        known = _DRY_RUNS[key] = (policy, _rehearses(inv, policy))
    return known[1]


# A dry run asked for in a value: `?dryRun=true`, `{"dry_run": true}`, dbt's `--args '{dry_run: true}'`, or a flag
# spelled in another case and given its value apart (aliyun's `--DryRun true`).
_REHEARSED = re.compile(r"(?i)(?:^|[?&\"'{,\s])dry[-_]?run[\"']?\s*[=:]\s*(?:true|1|yes|all)\b")
_DRY_FLAG = re.compile(r"(?i)^--?dry[-_]?run$")


def _rehearses(inv: Invocation, policy: Policy) -> bool:
    if _any(inv.args, policy.dry_run_flags) or (inv.program and _HELP_WORDS.intersection(inv.args[:5])):
        return True
    if any(_REHEARSED.search(a) or _DRY_FLAG.match(a) and n + 1 < len(inv.args)
           and inv.args[n + 1].lower() in ("true", "1", "yes") for n, a in enumerate(inv.args)):
        return True
    own = [f for pattern, flags in policy.program_dry_run_flags.items() if _named(inv.program, (pattern,))
           for f in flags]
    if not own:
        return False
    view = read_args(inv.args, policy.aliases.get(inv.program, {}), policy.value_options.get(inv.program, frozenset()))
    return _any(view.flags, tuple(own))


def _shape_matches(rule: Rule, inv: Invocation, policy: Policy) -> bool:
    """Program, subcommand, flags, arguments and operand classes (for non-SQL rules)."""
    view = read_args(inv.args, policy.aliases.get(inv.program, {}), policy.value_options.get(inv.program, frozenset()))
    words = view.positionals
    if not _subcommand_fits(rule, words):
        return False
    if rule.flags_all and not all(_any(view.flags, (f,)) for f in rule.flags_all):
        return False
    if (rule.flags_any and not _any(view.flags, rule.flags_any)) or _any(view.flags, rule.flags_none):
        return False
    if not _args_match(rule, tuple(a.lower() for a in inv.args)):
        return False
    if rule.targets:
        operands = words[len(rule.subcommand):][-1:] if rule.targets_last else words[len(rule.subcommand):]
        classes = {target_class(w, policy.system_paths, policy.data_paths, inv.cwd) for w in operands}
        classes |= {"dynamic"} if inv.dynamic else set()
        classes |= {"listed"} if "listed" in rule.targets and listed(inv) else set()
        if not classes & rule.targets:
            return False
    return True


def _subcommand_fits(rule: Rule, words: tuple[str, ...]) -> bool:
    """The rule's leading positional words (alternatives each) begin the command's positionals."""
    return len(words) >= len(rule.subcommand) and all(
        any(fnmatchcase(word.lower(), alt.lower()) for alt in alternatives)
        for word, alternatives in zip(words, rule.subcommand))


def _named_args_fit(rule: Rule, args: tuple[str, ...]) -> bool:
    """args_any and args_all against the lower-cased arguments."""
    return (not rule.args_any or _any(args, rule.args_any)) and all(
        _any(args, alternatives) for alternatives in rule.args_all)


def _args_match(rule: Rule, args: tuple[str, ...]) -> bool:
    """args_any, args_all and args_none against the lower-cased arguments."""
    return _named_args_fit(rule, args) and not (rule.args_none and _any(args, rule.args_none))


def written(inv: Invocation) -> str | None:
    """What a command writes to its output or files: echo/printf text, else its literal stdin (tee, dd)."""
    text = literal_output(inv) if inv.program in ("echo", "printf") else inv.stdin
    return None if text is None else text.strip().lower()


def _or_nul(text: str | None) -> str:
    return "\0" if text is None else text  # (an empty echo writes "": `echo "" > FILE` empties it)


def matches(rule: Rule, inv: Invocation, policy: Policy) -> bool:
    """Whether one rule matches one invocation."""
    if rule.detector or inv.detector:
        return rule.detector == inv.detector
    if rule.sql or inv.sql:
        return bool(rule.sql & inv.sql)
    if rule.program and not _named(inv.program, rule.program):
        return False
    if rule.redirect_to and not _any(inv.redirects, rule.redirect_to):
        return False
    if rule.content_any and not _any((_or_nul(written(inv)),), rule.content_any):
        return False
    if not (rule.program or rule.redirect_to) or inv.program == "sql":
        return False
    if not rule.applies_to_dry_run and _dry_run(inv, policy):
        return False
    return _shape_matches(rule, inv, policy)


MAX_CACHED = 16
_CANDIDATES: dict[int, tuple[tuple[Rule, ...], dict[str, tuple[Rule, ...]]]] = {}


def _candidates(rules: tuple[Rule, ...], program: str) -> tuple[Rule, ...]:
    """The rules that can match a program (its name matches, or the rule names none), memoised per rule set."""
    entry = _CANDIDATES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_CANDIDATES) >= MAX_CACHED:  # per-channel policies are built on demand: keep a few
            _CANDIDATES.clear()
        entry = _CANDIDATES[id(rules)] = (rules, {})
    by_program = entry[1]
    if program not in by_program:
        if len(by_program) >= 4096:
            by_program.clear()
        by_program[program] = tuple(r for r in rules if not r.program or _named(program, r.program))
    return by_program[program]


def check_command(command: str, policy: Policy | None = None) -> list[Finding]:
    """Findings for one command line or SQL statement, worst first (one per rule group). A command
    no rule matched is judged by its verb (guardrails/verbs.py)."""
    policy = policy or default_policy()
    found = invocations(command, policy)
    best = _matched(found, policy)
    if all(r.severity == "info" for r in best.values()):  # (a rule's info verdict does not hide a setting or an unknown)
        best.update(_matched([v for inv in found if (v := _beyond_rules(inv, policy)) is not None], policy))
    if not best:
        best = _matched([v for inv in found if (v := _by_verb(inv, policy)) is not None], policy)
    rules = sorted(best.values(), key=lambda r: rank(r.severity))
    text = command.strip()
    throwaway = _throwaway_target(text)
    findings = [Finding(command=text, rule=r.id, severity=_severity(r, throwaway), reason=r.reason + _noted(r, throwaway),
                        safer=r.safer) for r in rules]
    if not findings:
        findings = _learned(text, found, policy)
    return findings


LEARNED = "learned-risk"
# Programs that only read or print, beyond those verbs.py knows as such: the learned score is not asked about them.
_DIAGNOSTICS = frozenset("""
df du top htop atop free vmstat iostat mpstat pidstat sar ps pgrep pstree lsof netstat ss dig nslookup host ping
traceroute tracepath mtr whois stat file which lsblk blkid findmnt lscpu lsmem lspci lsusb uptime date hostname
whoami ls tree wc sort uniq cut tr column jq yq diff cmp md5sum sha256sum sha1sum nproc env printenv locale
mount showmount openssl cd pwd sleep xxd hexdump od strings base64 realpath readlink basename dirname seq
vi vim nvim nano emacs $editor firefox xdg-open
""".split())
# Options that make a tool only report (redis-cli's key and latency surveys).
_REPORTS = frozenset({"--bigkeys", "--memkeys", "--hotkeys", "--stat", "--latency", "--latency-history",
                      "--latency-dist", "--scan", "--help", "--version"})
# An interactive session, not an action: a shell opened in a pod, container or host (`kubectl exec -it POD --
# /bin/bash`, `docker exec -it ID sh`, `sudo su - app -s /bin/bash`, `sudo -i`, `tsh ssh`, a bare `bash`, a plain
# `ssh HOST` login).
_SESSION = re.compile(r"(?:^|\s)(?:-it|-ti|-i\s+-t|-t\s+-i|-u\s+\S+\s+-it)\s.*?(?:/bin/|/usr/bin/)?(?:ba|z|a|k)?sh\s*$"
                      r"|^kubectl\s+(?:-n\s+\S+\s+)?debug\s(?!.*\s--\s)"
                      r"|^(?:sudo\s+)?(?:su\b.*|-i|-s)$|^(?:sudo\s+)?(?:/bin/)?(?:ba|z)?sh$|^\w+\s+ssh(?:\s+[\w@.-]+)?$"
                      r"|^(?:sudo\s+)?ssh\s+[\w@.:-]+$")  # (a login: `ssh git@gitlab.com`; with options it may tunnel)
_CONFIG_FILE = re.compile(r"(?i)\.(?:ya?ml|conf|cfg|ini|properties|toml|json)$|authorized_keys$|/etc/")
_SCRATCH_SINKS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/tmp/", "/var/tmp/")
# Words that change something, wherever they stand among a command's leading words.
_CHANGES = DESTROYS | TAKES_DOWN | frozenset({
    "set", "update", "modify", "create", "add", "put", "apply", "install", "upgrade", "downgrade", "restore",
    "import", "reconfig", "reconfigure", "enable", "grant", "reset", "run", "exec", "execute", "start", "restart",
    "patch", "replace", "move", "rename", "approve", "promote", "demote", "write", "edit", "push", "load",
    "attach", "mount", "resize", "scale", "rollback", "overwrite", "unlock", "rotate", "migrate", "deploy",
})


_OUTPUT_OPTIONS = frozenset({"-out", "-keyout", "-o", "--output", "--out"})
_HTTP_OUTPUT = frozenset({"-o", "--output"})


def _saves_outside_scratch(args: tuple[str, ...], options: frozenset[str] = _OUTPUT_OPTIONS) -> bool:
    """An output option (`-o F`, openssl's `-out F`) whose file is outside scratch."""
    return any(a in options and n + 1 < len(args) and _outside_scratch(args[n + 1]) for n, a in enumerate(args))


def _writes_out(inv: Invocation) -> bool:
    """A diagnostic that changes something by its options: one that writes its output over a file outside scratch
    (openssl's -out and -keyout), or a mount that mounts, remounts or mounts everything (a bare `mount` lists)."""
    if inv.program.lower() == "mount":
        return any("/" in a or a in ("-a", "--all", "-o", "--options") for a in inv.args)
    return inv.program.lower() in _DIAGNOSTICS and _saves_outside_scratch(inv.args)


def _outside_scratch(path: str) -> bool:
    """An absolute path that is not a device stream or under /tmp (where output is saved, not configuration)."""
    return path.startswith("/") and not path.startswith(_SCRATCH_SINKS)


_AWK_ACTS = re.compile(r"system\s*\(|getline|printf?\b[^;}]*[>|]")  # awk code that runs or writes
# A data file named alone (`runners-manager.json`): what it is, not something run.
_DATA_FILE = re.compile(r"(?i)^[\w./-]+\.(?:json|ya?ml|txt|log|csv|md|conf|cfg|ini|xml|pem|crt|key|toml|tf|sql)$")
# A client's own setup on the engineer's machine, not the systems it manages (`kubectl config use-context`,
# `git remote add`, `gcloud config set project`): what could weaken security there (sslVerify) is a rule's.
_LOCAL_SETUP = {
    "git": frozenset({"remote", "clone", "fetch", "pull", "checkout", "switch", "branch", "stash", "add", "commit",
                      "config"}),
    "kubectl": frozenset({"config"}), "oc": frozenset({"config", "login", "project"}),
    "gcloud": frozenset({"config", "auth"}), "aws": frozenset({"configure", "sso"}),
    "az": frozenset({"login", "account"}), "helm": frozenset({"repo"}),
}
_READ_SQL = re.compile(r"(?i)^\s*(?:select|show|explain|describe|desc|with|values|table|\\d)\b")


# What an RPC-style endpoint that only reads is named by (its first word): not nouns such as `logs` or `version`,
# which name what an endpoint acts on (`/_ism/change_policy/logs-app`, `/IncrementPlayerStatisticVersion`).
_READ_ENDPOINTS = frozenset({"list", "get", "search", "query", "filter", "find", "lookup", "validate", "verify", "check",
                             "explain", "analyze", "count", "describe", "preview", "estimate", "simulate", "test",
                             "msearch", "mget"})


def _posts_a_read(urls: list[str]) -> bool:
    """A POST that reads: to an RPC-style endpoint whose last path segment names a read (`/flow_runs/filter`,
    `/_admin/backup/list`, `/Admin/GetPlayersInSegment`). The URLs come without their scheme."""
    for url in urls:
        path = url.split("?", 1)[0].rstrip("/")
        last = parts(path.rsplit("/", 1)[-1]) if "/" in path else []
        if last and last[0] in _READ_ENDPOINTS:
            return True
    return False


# Redis commands that only read (the first word after redis-cli's options; SCRIPT, CLIENT and the like read only
# with these second words), and the options of redis-cli that take a value.
_REDIS_READS = frozenset("""
get mget strlen getrange exists type ttl pttl expiretime keys scan dbsize info ping echo time lastsave role
llen lrange lindex lpos hget hmget hgetall hkeys hvals hlen hexists hscan hstrlen hrandfield scard smembers
sismember smismember srandmember sscan zcard zcount zrange zrangebyscore zrevrange zrevrangebyscore zscore
zmscore zrank zrevrank zscan zlexcount xlen xrange xrevrange xinfo xpending pfcount bitcount bitpos getbit
geopos geodist georadius_ro geosearch object memory slowlog latency dump lolwut command
""".split())
_REDIS_READ_SUBCOMMANDS = {"script": {"exists"}, "client": {"list", "info", "getname", "id"}, "config": {"get"},
                           "cluster": {"info", "nodes", "slots", "shards", "myid", "countkeysinslot", "keyslot"},
                           "memory": {"usage", "stats", "doctor"}, "slowlog": {"get", "len"},
                           "object": {"encoding", "freq", "idletime", "refcount"}, "pubsub": {"channels", "numsub"}}
_REDIS_VALUE_OPTIONS = frozenset({"-h", "-p", "-a", "-u", "-n", "-r", "-i", "-s", "--user", "--pass", "--askpass",
                                  "--cacert", "--cacertdir", "--cert", "--key", "--sni", "--tls-ciphers", "-d"})


def _redis_reads(args: tuple[str, ...]) -> bool:
    """A redis-cli call whose command only reads (`redis-cli -h x --pass "$P" LLEN queue:jobs`)."""
    words = [w.lower() for w in read_args(args, {}, _REDIS_VALUE_OPTIONS).positionals]
    if not words or words[0] not in _REDIS_READS and words[0] not in _REDIS_READ_SUBCOMMANDS:
        return False
    second = _REDIS_READ_SUBCOMMANDS.get(words[0])
    return second is None or (len(words) > 1 and words[1] in second)


def _only_reads(inv: Invocation, policy: Policy, text: str) -> bool:
    """Whether an invocation only reads: a read-only program, a read verb, a dry run, an HTTP GET, a SELECT; not
    when it writes over a file outside scratch (`echo "" > /var/lib/app/app.db-wal`) or a leading word changes
    something (`hammer content-view version delete`, `dnf history rollback`)."""
    if any(_outside_scratch(r) or _CONFIG_FILE.search(r) for r in inv.redirects):
        return False
    if inv.program == "sql":  # a SELECT, unless a function it calls changes something (`SELECT SHUTDOWN()`)
        return all(kind.startswith("call:") and not _CHANGES.intersection(parts(kind[5:])) for kind in inv.sql) \
            and bool(_READ_SQL.match(text))
    if inv.program.lower() in HTTP_CLIENTS:  # a GET, unless its URL asks for an action (`?action=RESTORE`,
        # `/manager/text/stop`, jolokia's `exec`) or it saves what it fetches where code or config lives; a POST
        # to an endpoint named for a read (`/_search`, `/acl/validate`, `/Admin/GetTasks`); a request that asks
        # for a dry run (`?dryRun=true`, `{"dry_run": true}`)
        if _dry_run(inv, policy):
            return True
        urls = [a.split("://", 1)[-1] for a in inv.args if "://" in a or a.startswith((":/", "$")) and "/" in a]
        words = [w for u in urls for w in re.split(r"[/?&=:;,.]+", u)]  # (also $ES/_search: a URL in a variable)
        method = http_method(inv)
        return (method in ("get", "head") or method == "post" and _posts_a_read(urls)) \
            and not any(_CHANGES.intersection(parts(w)) or w in ("exec", "cmd", "action") for w in words) \
            and not _saves_outside_scratch(inv.args, _HTTP_OUTPUT)
    if inv.program.lower() in ("yq", "jq", "sed") and any(a in ("-i", "--inplace", "--in-place") for a in inv.args):
        return False
    if inv.program.lower() in ("redis-cli", "valkey-cli", "keydb-cli") and _redis_reads(inv.args):
        return True
    if _writes_out(inv):  # (`openssl genrsa -out /etc/ssl/private/x.key`, `mount -o remount,ro /`)
        return False
    if inv.program in READ_PROGRAMS or inv.program.lower() in _DIAGNOSTICS or _dry_run(inv, policy) \
            or _REPORTS.intersection(inv.args):
        return True
    if inv.program in ("awk", "gawk", "mawk") and not any(_AWK_ACTS.search(a) or a == "inplace" for a in inv.args):
        return True  # a filter; what its code runs or writes is a rule's (foreign.py)
    words = leading_words(inv)
    lead = words[1:3]
    said = {p for w in words for p in parts(w)}
    if lead and lead[0] in _LOCAL_SETUP.get(inv.program, ()) and not said & (DESTROYS | TAKES_DOWN):
        return True  # (`az account subscription cancel` is no local setup)
    if said & _CHANGES:
        return False
    if "-" in inv.program and parts(inv.program)[:1] and parts(inv.program)[0] in READS:
        return True  # PowerShell's Get-Item, Test-Connection
    return any(parts(w)[:1] and parts(w)[0] in READS for w in lead)


# What a program's name looks like: `kubectl`, `pg_ctl`, `./run.sh`, `~/bin/x`, `$TOOL`, PowerShell's `Remove-Item`,
# a console's upper-case verb (`MATCH`, `WDSUTIL`). Not a number, a capitalised word or a key (`6432 |`, `Name`,
# `Plan:`): output pasted in a code block.
# Output, not a command: a table's padded cells (`off   | on`), columns apart by runs of spaces on one line
# (`nginx-7c  1/1   Running   0   24h`), a sentence (`public and secret key created and signed.`), a line of code
# assigning (`secrets_hash = node['x']`), a label and its value (`URL of public key : [not set]`).
_PASTED_OUTPUT = re.compile(r"\S {2,}\|(?: |$)|(?:^|[^\n\\]) \| {2,}\S|\S {3,}[^\n]*\S {3,}\S|^[a-z]\w*(?: [\w,']+){3,}[a-z]\.$"
                            r"|^[\w.\[\]'\"<>]+ +=[^=~]|^[A-Za-z][\w ]*? : ")  # (and code's `x = y`, a `Label : value`)
_POWERSHELL_VERBS = ("Add|Approve|Backup|Block|Clear|Close|Compress|Connect|Convert|ConvertTo|ConvertFrom|Copy|Deny|Disable"
                     "|Disconnect|Dismount|Edit|Enable|Enter|Exit|Expand|Export|Find|Format|Get|Grant|Import|Initialize"
                     "|Install|Invoke|Join|Lock|Measure|Merge|Mount|Move|New|Optimize|Out|Protect|Publish|Read|Register"
                     "|Remove|Rename|Repair|Reset|Resize|Restart|Restore|Resume|Revoke|Save|Search|Select|Send|Set|Show"
                     "|Start|Stop|Submit|Suspend|Switch|Sync|Test|Unblock|Uninstall|Unlock|Unprotect|Unregister|Update"
                     "|Use|Wait|Write")
_PROGRAM_NAME = re.compile(rf"^(?:[a-z_][a-z0-9_.+-]*|(?:{_POWERSHELL_VERBS})-[A-Za-z0-9]+|[.~/$][\w./~${{}}-]*"
                           r"|[A-Z][A-Z0-9_]+|[A-Z][a-z]*[0-9][\w.-]*|[A-Za-z_][\w.+-]*\.(?:sh|py|pl|rb|bat|cmd|exe|ps1)"
                           r"|[A-Za-z]:\\\S*|[a-z_]\w*(?:\.\w+)+\(.*\))$")  # (zkCli.sh, D:\\x\\stop.bat, cmo.setX(false))


_TRANSPORTS = frozenset({"ssh", "su", "runuser", "sg"})
_CONTAINER_TOOLS = frozenset({"kubectl", "oc", "docker", "podman", "crictl", "nerdctl"})


def _transports(inv: Invocation) -> bool:
    """A wrapper that only carries a command to where it runs (`ssh HOST CMD`, `kubectl exec POD -- CMD`, `docker
    exec ID CMD`, `su - app -c CMD`): what it carries is judged, not the carrier. Not `docker run` (a new container,
    its mounts and privileges) nor a login shell fed from stdin."""
    program = inv.program.lower()
    if program in _CONTAINER_TOOLS:
        head = inv.args[:inv.args.index("--")] if "--" in inv.args else inv.args
        if "exec" not in head or "run" in head:
            return False
    elif program not in _TRANSPORTS:
        return False
    carried = expand(inv, MAX_DEPTH - 1)[1:2]  # (one level: what it carries first)
    return bool(carried) and not carried[0].detector and carried[0].program != "sh"


def asks_learned(text: str, found: list[Invocation], policy: Policy) -> bool:
    """Whether the learned score is asked about a command nothing flagged: it reads as a command (its first program
    named like one, not output pasted in a code block) and something it runs is not only reads. A target named
    as throwaway does not keep it from being asked: what a rule flags there is housekeeping, but what no rule
    knows may be a grant or code run on that target (`icacls D:\\tmp /grant Everyone:F`, `bash /tmp/fix.sh`)."""
    live = [inv for inv in found if not inv.detector and inv.program and inv.program not in PREFIXES]
    if not live \
            or not (live[0].program == "sql" or _PROGRAM_NAME.match(live[0].program)) \
            or any(inv.program.isdigit() for inv in live) \
            or _PASTED_OUTPUT.search(text) or _SESSION.search(text) or _DATA_FILE.match(text):
        return False
    return not all(_only_reads(inv, policy, text) or _transports(inv) for inv in live)


@lru_cache(maxsize=1)
def _default_rules() -> Policy:
    return default_policy().with_severities({LEARNED: "off"})


def _silenced(text: str, policy: Policy) -> bool:
    """Whether an operator's policy turned off (or lowered) the default rule that flags the command: the learned
    score does not bring back what they silenced."""
    if policy is default_policy():
        return False
    return any(f.severity in ("warn", "block") for f in check_command(text, _default_rules()))


def _learned(text: str, found: list[Invocation], policy: Policy) -> list[Finding]:
    """For a command nothing flagged: the learned score (guardrails/learned.py), when what it runs is not only
    reads. Its finding names the words that weighed most."""
    scorer = learned.model()
    try:
        rule = policy.rule(LEARNED)
    except KeyError:  # turned off
        return []
    if scorer is None or not asks_learned(text, found, policy):
        return []
    score = scorer.score(text)
    if score <= scorer.threshold or _silenced(text, policy):  # (the score first: _silenced checks the command again)
        return []
    words = ", ".join(f"'{w if len(w) <= 30 else w[:29] + '…'}'" for w in scorer.weighed(text))
    reason = f"{rule.reason} Score {score:.2f}" + (f", from {words}." if words else ".")
    return [Finding(command=text, rule=rule.id, severity=rule.severity, reason=reason, safer=rule.safer)]


# What a command acts on, named as throwaway (a pull request's preview, a test or scratch copy, a canary) with
# nothing named as production: deleting or stopping it is housekeeping, reported at info. Protections
# weakened, blocks and code run unseen keep their severity.
_THROWAWAY = re.compile(r"(?i)(?<![a-z0-9])(?:pr-?\d+|preview|review-apps?|tmp|temp|scratch|ci(?![.:)])|e2e|sandbox"
                        r"|canary|loadtest|load-test|ephemeral)(?![a-z])")  # (ci.acme.io is a CI server, Ci:: a Ruby namespace, icacls (CI) a flag)
_FILTERS = re.compile(r"(?<!\S)(?:-i?name|-i?path|-regex|--pattern|--include|--exclude|--match)[= ]+(\S+)")
_LOCAL_PATH = re.compile(r"(?<![\w:/])(?:/|~/|\./|[A-Za-z]:\\)\S*")  # a file the command reads or writes, not a resource's name
_PRODUCTION = re.compile(r"(?i)(?<![a-z])(?:prod|production|prd|live|primary|master|main)(?![a-z])")
_HOUSEKEEPING = frozenset({"destroys_data", "takes_down"})
_VERB_DETECTORS = frozenset({"verb_destroys", "verb_takes_down", "state_switched_down"})


def _throwaway_target(text: str) -> str | None:
    if _PRODUCTION.search(text):
        return None
    text = _FILTERS.sub(" ", _LOCAL_PATH.sub(" ", text))  # a file's path, or a pattern that selects, is not a name
    found = _THROWAWAY.search(text.replace("*", " "))
    return found.group() if found else None


def _severity(rule: Rule, throwaway: str | None) -> str:
    housekeeping = throwaway and rule.severity == "warn" and rule.effect in _HOUSEKEEPING
    kept = rule.sql or (rule.detector and rule.detector not in _VERB_DETECTORS)  # SQL: its own tables; exposures stand
    return "info" if housekeeping and not kept else rule.severity


def _noted(rule: Rule, throwaway: str | None) -> str:
    return f" (The target is named as throwaway: {throwaway}.)" if _severity(rule, throwaway) != rule.severity else ""


def _matched(found: list[Invocation], policy: Policy) -> dict[str, Rule]:
    """The worst matching rule of each group over some invocations."""
    best: dict[str, Rule] = {}
    for inv in found:
        for rule in _candidates(policy.rules, inv.program):
            current = best.get(rule.group)
            if (current is None or rank(rule.severity) < rank(current.severity)) and matches(rule, inv, policy):
                best[rule.group] = rule
    return best


def _by_verb(inv: Invocation, policy: Policy) -> Invocation | None:
    """For a command no rule knows: what its verb deletes, stops or disables (guardrails/verbs.py), when no
    rule for the tool looked at it."""
    if inv.detector or inv.sql or inv.program in PREFIXES or _dry_run(inv, policy):
        return None
    if inv.program not in HTTP_CLIENTS and _considered(inv, policy):  # an HTTP client's rules judge its DELETEs
        return None
    found = verb_effect(inv)
    if found is None:
        return None
    detector = {"destroys_data": "verb_destroys", "takes_down": "verb_takes_down"}.get(found.effect,
                                                                                    "verb_weakens_security")
    return Invocation(detector=detector, args=(found.verb,))


def _beyond_rules(inv: Invocation, policy: Policy) -> Invocation | None:
    """What no rule needs to know the tool for: a protection switched off by its setting, data kept a day or
    less or left with one copy, access given to everyone, a state set out of service (guardrails/switches.py),
    or an action that is not on the line (a variable, code handed over in one, a console fed a file)."""
    if inv.detector or inv.sql or inv.program in PREFIXES or _dry_run(inv, policy):
        return None
    setting = switched_off(inv)  # whatever a rule for the tool looked at, a protection switched off is news
    if setting is not None:
        return Invocation(detector="security_switched_off", args=(setting,))
    kept = retention_cut(inv)  # and data the system will delete within a day
    if kept is not None:
        return Invocation(detector="retention_cut", args=(kept,))
    single = copies_cut(inv)  # and data left with one copy
    if single is not None:
        return Invocation(detector="copies_cut", args=(single,))
    opened = device_opened(inv) or any_source_allowed(inv)  # and a device opened (telnet on, any source let in)
    if opened is not None:
        return Invocation(detector="verb_weakens_security", args=(opened,))
    everyone = everyone_granted(inv)  # and access given to everyone
    if everyone is not None:
        return Invocation(detector="verb_weakens_security", args=(everyone.verb,))
    state = switched_down(inv)  # so is a resource's state set out of service
    if state is not None:
        return Invocation(detector="state_switched_down", args=(state,))
    if _action_unknown(inv, policy):
        return Invocation(program=inv.program, detector="opaque_command")
    unseen = code_in_variable(inv)
    if unseen is not None:
        return Invocation(program=inv.program, detector=unseen)
    if _generated_deleted(inv):
        return Invocation(program=inv.program, detector="manifests_deleted")
    return None


def _generated_deleted(inv: Invocation) -> bool:
    """`kustomize build overlays/prod | kubectl delete -f -`, `linkerd uninstall | kubectl delete -f -`: every
    resource another program's manifests list is deleted (a whole application or control plane)."""
    if inv.program not in ("kubectl", "oc") or "delete" not in inv.args or inv.stdin_from != "program":
        return False
    return any(a in ("-f", "--filename") and n + 1 < len(inv.args) and inv.args[n + 1] == "-" or a == "--filename=-"
               for n, a in enumerate(inv.args))


def _substituted(word: str) -> bool:
    """A word that is wholly a variable or another command's output: `$VERB`, `"$1"`, `$(cat next_step)`."""
    if word.lower() in ("$true", "$false", "$null"):
        return False  # PowerShell's constants
    return is_parameter(word, positional=True) or (word.startswith("$(") and word.endswith(")")) \
        or (len(word) > 1 and word.startswith("`") and word.endswith("`"))


# A substituted word that is a value, not the action: a lookup's output (`jcmd $(pgrep -f api) VM.version`,
# `kill -0 $(cat app.pid)`) or an upper-case variable named for a host, a name or an id (`sqlcmd -S $SQLSRV`,
# `write $ZVERSION`); a lower-case one is a loop's (`for ns in ...; do kubectl delete $ns`), and stays unknown.
_LOOKUP = re.compile(r"^[$`]\(?\s*(?:pgrep|pidof|hostname|whoami|date|id|uname|nproc|cat\s+\S+\.pid)\b")
_VALUE_NAME = re.compile(r"^[\"']?\$\{?[A-Z0-9_]*?(?:SRV|SERVER|HOST|HOSTNAME|DB|DATABASE|URL|URI|ENDPOINT|ADDR|ID|NAME|"
                         r"DIR|PATH|PORT|USER|INSTANCE|CLUSTER|NS|NAMESPACE|REGION|ZONE|PROJECT|VERSION|TAG|PID)"
                         r"\}?[\"']?$")


def _a_value(word: str) -> bool:
    return bool(_LOOKUP.match(word) or _VALUE_NAME.match(word))


def _names_a_verb(rule: Rule) -> bool:
    """A rule that looks for a verb among the arguments (`az ... delete`), not an option or a value."""
    words = (*rule.args_any, *(a for alternatives in rule.args_all for a in alternatives))
    return any(not w.startswith("-") and parts(w)[:1] and parts(w)[0] in _VERBS for w in words)


_VERBS = DESTROYS | TAKES_DOWN
_CONSOLE_NAME = re.compile(r"(?:ctl|adm|admin|cmd|cli|console|mgr)$")


def _action_unknown(inv: Invocation, policy: Policy) -> bool:
    """Whether the word that says what a command does is a variable: `kubectl $VERB deploy/api`, `aws $SVC $OP`,
    `kamcmd $(cat next_step.txt)`. A rule for the tool decides on that word (or the tool is a console of
    verbs), so what it does cannot be told; a later word that only reads (`kubectl $CTX get pods`) can."""
    if inv.program.lower() in HTTP_CLIENTS:  # a URL in a variable: the method says what the call does, unless it
        return any(a in ("-X", "--request", "--method") and n + 1 < len(inv.args) and is_parameter(inv.args[n + 1])
                   for n, a in enumerate(inv.args))  # is in a variable too (curl -X "$METHOD" "$URL/$ENDPOINT")
    if inv.program in ("MVS", "TSO"):
        return False  # JES2's $P is no variable
    args = inv.args[:inv.args.index("--")] if "--" in inv.args else inv.args
    view = read_args(args, policy.aliases.get(inv.program, {}), policy.value_options.get(inv.program, frozenset()))
    words = [w for w in view.positionals[:MAX_LEADING] if not _a_value(w)]
    slot = next((n for n, word in enumerate(words) if _substituted(word)), None)
    if slot is None or any(parts(w)[:1] and parts(w)[0] in READS for w in words[slot + 1:]):
        return False
    unknown_only = all(_substituted(w) for w in words)
    rules = _with_defaults(policy)
    for rule in _candidates(rules, inv.program):
        if not rule.program:
            continue
        if len(rule.subcommand) > slot and tuple(rule.subcommand[slot]) != ("*",) \
                and _subcommand_fits(replace(rule, subcommand=rule.subcommand[:slot]), words):  # (`*`: any name, no verb)
            return True
        if unknown_only and not rule.subcommand and _names_a_verb(rule):  # `az $(cat next_cmd)`: any words at all
            return True
    return slot == 0 and bool(_CONSOLE_NAME.search(inv.program.lower()))


def _with_defaults(policy: Policy) -> tuple[Rule, ...]:
    """A policy's rules and the default ones: what a rule for the tool looks at, even one an operator turned off."""
    return policy.rules if policy is default_policy() else (*policy.rules, *default_policy().rules)


_PATH_CLASSES = frozenset({"root", "root_glob", "home", "system", "data", "path", "scratch", "relative"})


def _considered(inv: Invocation, policy: Policy) -> bool:
    """Whether a rule for this program looked at this very command (its program, subcommand and named
    arguments fit) and let it pass on a detail: `zfs destroy -nv` is a dry run, `rm -rf ./build` a
    build directory. Their verdict stands; the verb detector is for what no rule knows."""
    view = read_args(inv.args, policy.aliases.get(inv.program, {}), policy.value_options.get(inv.program, frozenset()))
    args = tuple(a.lower() for a in inv.args)
    rules = _with_defaults(policy)  # (an operator who turned a rule off wants its commands to pass)
    for rule in _candidates(rules, inv.program):
        if not rule.program or (rule.targets and not rule.targets & _PATH_CLASSES) or rule.redirect_to \
                or rule.content_any:
            continue  # a pattern around the command (a listing piped into it, what it writes where), not the command
        if _subcommand_fits(rule, view.positionals) and _named_args_fit(rule, args):
            return True
    return False


def check(text: str, policy: Policy | None = None) -> Verdict:
    """Extract the commands of a Markdown or plain text and check them all."""
    findings = [f for command in extract_commands(text) for f in check_command(command, policy)]
    return Verdict(tuple(findings))
