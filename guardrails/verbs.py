"""What a command line's verb says it does, for tools no rule knows.

Command-line tools share a vocabulary: `hcloud server delete`, `doctl databases delete`, `oci compute
instance terminate`, `istioctl uninstall`, `gluster volume stop`, `talosctl reset`, `diskutil
eraseDisk`, `vault audit disable`, PowerShell's `Remove-Item`, `Clear-Disk` and `Stop-Computer`.
A command no rule looked at (guardrails/commands.py decides that) is judged by the verbs among its
leading words: one that deletes, stops or disables something is worth a second look whatever the
tool. Where a rule for the tool looked at the command and let it pass (`zfs destroy -nv`), the rule's
verdict stands.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from guardrails.carriers import option_values
from guardrails.interpreters import language
from guardrails.invocation import Invocation, read_args
from guardrails.sql import looks_like_sql

# Verbs by what they do to what they name. Words that are also everyday cleanup (clean, clear,
# prune, restart, rollback, update) are not here: a runbook uses them for routine steps.
DESTROYS = frozenset({
    "delete", "del", "destroy", "remove", "rm", "erase", "wipe", "purge", "flush", "flushall", "flushdb",
    "drop", "truncate", "zap", "shred", "nuke", "obliterate", "terminate", "deprovision", "decommission",
    "uninstall", "reset", "format", "reformat", "expunge", "discard", "deregister", "unregister", "reimage", "eradicate",
    "revert", "empty", "zeroize",
})
TAKES_DOWN = frozenset({
    "stop", "shutdown", "halt", "poweroff", "reboot", "kill", "killall", "suspend", "disable",
    "deactivate", "drain", "offline", "down", "unload", "detach", "evict", "revoke", "leave", "bootout", "rebuild",
    "failover", "switchover", "takeover", "disconnect", "hangup", "hupall", "cancel",
    # a member evicted or paused, writes frozen, config removed, a filesystem unmounted under its users
    "pause", "assassinate", "quiesce", "freeze", "unset", "unmount", "umount",
    "undeploy", "unsubscribe",  # (an application taken off its server, an alert's delivery stopped)
})
# A disabled or deleted thing of these kinds leaves a system less protected.
SECURITY_NOUNS = frozenset({
    "audit", "auditing", "firewall", "fw", "selinux", "apparmor", "tls", "ssl", "mfa", "2fa", "auth",
    "authentication", "authorization", "encryption", "defender", "antivirus", "protection", "policy",
    "policies", "gatekeeper", "seccomp", "sandbox", "signing", "verification", "mtls", "waf", "acl", "acls",
})
# Package managers and the like remove software, which the next install brings back; version
# control removes files its history keeps (`git rm --cached`). Their dangerous verbs are rules.
SOFTWARE = frozenset({
    "git", "hg", "svn", "fossil", "jj", "dvc", "git-lfs", "module", "ml",  # (environment modules: module purge unloads)
    "apt", "apt-get", "aptitude", "yum", "dnf", "zypper", "apk", "pacman", "brew", "port", "snap", "flatpak",
    "pip", "pip3", "pipx", "uv", "poetry", "conda", "mamba", "npm", "pnpm", "yarn", "gem", "bundle", "cargo",
    "go", "composer", "nuget", "choco", "winget", "scoop", "asdf", "mise", "nvm", "pyenv", "rbenv", "sdk",
    "krew", "helm-plugin", "code", "rustup", "dotnet", "mvn", "gradle", "buildah",
})
# Local sandboxes on the engineer's own machine: deleting a kind or minikube cluster loses nothing shared.
SANDBOXES = frozenset({"kind", "minikube", "k3d", "colima", "limactl", "multipass", "vagrant", "podman-machine"})
# Removing someone's membership or a binding takes access away; it destroys nothing (Remove-ADGroupMember,
# remove-iam-policy-binding).
ACCESS_ENTRIES = frozenset({"member", "members", "membership", "binding", "bindings", "permission", "permissions",
                            "access", "accessrights", "grant", "grants", "roles"})  # remove-roles: from a user
# What is removed or disabled is itself an opening (the guest user, an allow-all rule, anonymous access):
# taking it away hardens. And accounts are disabled, not destroyed, when someone leaves.
OPENINGS = re.compile(r"(?i)(?<![a-z])(?:guest|anonymous|anon|allow[-_]?all|allow[-_]?any|any[-_]?any|public[-_]?access"
                      r"|everyone|smb1|smbv1|smb1protocol|telnet|insecure|public[-_]?url|anon[-_]admin"
                      r"|0\.0\.0\.0/0|::/0)"
                      r"(?![a-z])")
_HELP = frozenset({"/?", "-?", "--help", "-help", "/help"})
_GUARDS = re.compile(r"(?i)block|deny|reject|prevent|restrict|protect|disallow")  # Block-Telnet-Inbound guards


def _removes_opening(text: str) -> bool:
    """What the command removes or disables is an opening, not a rule that guards against one."""
    return bool(OPENINGS.search(text)) and not _GUARDS.search(text)


ACCOUNTS = frozenset({"user", "users", "account", "adaccount", "login", "localuser"})
# Words that say a deletion keeps what matters (retention) or that what is flushed is a cache.
KEEPS = frozenset({"retain", "keep", "keeping"})
CACHES = frozenset({"cache", "caches", "cached", "transient", "transients"})  # (WordPress keeps caches as transients)
# Leading words that say the command only reads (or rehearses) whatever verb follows.
READS = frozenset({
    "list", "ls", "get", "describe", "show", "status", "info", "inspect", "logs", "log", "diff", "plan",
    "check", "validate", "verify", "version", "help", "history", "top", "cat", "view", "explain", "dump",
    "export", "watch", "search", "find", "query", "test", "lint", "preview", "what", "whatif", "estimate",
    "can", "simulate", "who",
})
# Programs whose words are names to look up or print, not verbs to run (`last -x reboot`, `type -a rm`).
READ_PROGRAMS = frozenset({
    "last", "lastb", "type", "which", "whereis", "man", "whatis", "apropos", "help", "command", "tldr", "info",
    "history", "echo", "printf", "get-help", "grep", "egrep", "fgrep", "rg", "ag", "ack", "cat", "less", "more", "head",
    "tail", "journalctl", "dmesg", "complete", "compgen", "getent", "id", "groups", "finger", "w", "who",
    # network devices' consoles: show and their output filters (`show run | include shutdown`); `no X`
    # negates a configuration line, and the device rules judge what it removes
    "show", "include", "exclude", "begin", "section", "match", "except", "display", "no",
})
# PowerShell says its verb first (Verb-Noun). Remove-Item is PowerShell's rm: its rules judge its paths.
POWERSHELL_VERBS = {"remove": "destroys_data", "clear": "destroys_data", "stop": "takes_down", "disable": "takes_down",
                    "uninstall": "destroys_data", "reset": "destroys_data", "dismount": "takes_down",
                    "suspend": "takes_down", "unregister": "destroys_data", "revoke": "takes_down",
                    "restart": "takes_down", "restore": "destroys_data", "close": "takes_down", "move": "takes_down"}
POWERSHELL_SAFE_NOUNS = frozenset({"host", "content", "variable", "history", "job", "transcript", "watch", "item",
                                   "itemproperty", "window", "psdrive", "pssession", "cimsession", "adobject",
                                   "webapppool",  # Restart-WebAppPool recycles it gracefully
                                   "adaccount", "localuser"})  # Disable-ADAccount: someone left, nothing is destroyed
# In a compound subcommand (`delete-hosted-zone`, `stop_app`) only these lead as verbs:
# `reset-windows-password` resets a password, `drain-timeout` is a setting.
COMPOUND_LEADS = frozenset({
    "delete", "destroy", "remove", "terminate", "purge", "drop", "flush", "wipe", "erase", "stop", "shutdown", "eradicate", "del",
    "uninstall", "disable", "kill", "killall", "truncate", "deregister", "deprovision", "decommission", "suspend",
    "failover", "switchover", "takeover",
})
MAX_LEADING = 4  # the words after the program where CLIs put their nouns and verb
# Options that always take a value, which is a name, not a verb (`docker run --name pause ...`)
_NAMING_OPTIONS = frozenset({"--name", "--hostname", "--label", "--title", "--description", "--comment", "--message",
                             "--reason", "--note"})
# Pausing a change (a rollout, an upgrade) stops the change, not the service.
_CHANGES = frozenset({"rollout", "rollouts", "upgrade", "upgrades", "migration", "migrations", "deployment", "update"})
# Ceph's maintenance flags: unsetting one (`ceph osd unset noout`) puts the cluster back to normal.
_NO_FLAGS = frozenset({"noout", "nodown", "noin", "noup", "norebalance", "norecover", "nobackfill", "noscrub", "nodeep",
                       "pause", "full", "notieragent", "nosnaptrim"})
_OPTION_VALUE = re.compile(r"\d+(?:\.\d+){0,3}(?::\d+)?|[\w.-]+:\d+|/[\w./-]+")  # a port, a count, an address, a socket
_PROGRAM = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")  # `hcloud`, `linode-cli`, `./bin/x` is read by its base name
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_:.][A-Za-z0-9]+)*$")  # heroku's `apps:destroy`, acli's `vm.delete` too
_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True)
class VerbFinding:
    """The effect a command's verb names, and the verb as written."""

    effect: str  # destroys_data, takes_down, weakens_security
    verb: str


# A strong verb glued to its noun in one lower-case word: `disablebinary`, `hastop`, `db2stop`,
# `stopsrc`; (`clearsnapshot` and `restart` are not here: clear and restart are everyday words).
_GLUED = re.compile(r"^(delete|destroy|remove|purge|wipe|stop|shutdown|halt|disable|kill|truncate|suspend)(?!light|watch|er\b)"
                    r"[a-z0-9]{2,}$|^[a-z0-9]{2,}?(stop|shutdown|destroy|delete|purge|wipe|disable|erase|kill|drop)$"
                    r"|^(?:q|x|cfg|conf|config|sys|sw|switch|fw|db|vol|port|ap|if|dev)(delete|del|clear|reset|disable"
                    r"|boot|remove|rm|erase|stop|kill)$")  # not droplet, asphalt, unclear


def parts(word: str) -> list[str]:
    """A word's lower-cased parts: `delete-hosted-zone` -> delete, hosted, zone; `eraseDisk` -> erase, disk;
    `disablebinary` -> disable, binary."""
    out = [p.lower() for chunk in re.split(r"[-_.:]", word) for p in _PARTS.findall(chunk)]
    if len(out) == 1 and word.islower():
        glued = _GLUED.match(out[0])
        if glued:
            verb = glued.group(1) or glued.group(2) or glued.group(3)
            verb = {"del": "delete", "rm": "remove", "clear": "wipe", "boot": "reboot"}.get(verb, verb)
            if glued.group(1):
                return [verb, out[0][len(glued.group(1)):]]
            suffix = glued.group(2) or glued.group(3)
            return [out[0][:-len(suffix)], verb]
    return out


def leading_words(inv: Invocation) -> list[str]:
    """The program (PowerShell names its verb there: `Stop-Computer`) and the first words after it
    that look like nouns or verbs, not values (paths, ids, numbers, hosts)."""
    words = []
    args = inv.args[:inv.args.index("--")] if "--" in inv.args else inv.args  # after --: the command it carries
    for word in read_args(args, {}, _NAMING_OPTIONS).positionals[:MAX_LEADING]:
        if not _WORD.match(word):
            if _OPTION_VALUE.fullmatch(word):
                continue  # an option's value read as a positional (`--host 127.0.0.1 --port 8000 ... lease4-wipe`)
            break
        words.append(word)
    return [inv.program, *words]


# HTTP clients: a POST, PUT or PATCH to an admin endpoint says what it does in its path
# (`/api/v1/admin/tsdb/delete_series`, `/purge_all`, `/exit`, `/monitor/mute_all`, `?action=DELETE`).
HTTP_CLIENTS = frozenset({"curl", "http", "https", "xh", "xhs", "wget", "httpie"})
HTTP_WRITES = frozenset({"post", "put", "patch"})
API_VERBS = {"exit": "takes_down", "quit": "takes_down", "empty": "destroys_data", "close": "takes_down", "mute": "weakens_security", "pause": "weakens_security",
             "downtime": "weakens_security", "quitquitquit": "takes_down",
             "silence": "weakens_security", "purge": "destroys_data", "seek": "destroys_data",
             # an endpoint agent's host cut off the network; every channel or service redeployed at once
             "contain": "takes_down", "isolate": "takes_down", "redeploy": "takes_down",
             "fail": "takes_down",  # Envoy's /healthcheck/fail: the instance leaves every load balancer
             "silences": "weakens_security"}
_DATA_FLAGS = ("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json", "-F", "--form",
               "--post-data", "--post-file", "--upload-file", "-T")
_URL = re.compile(r"^(?:https?://[^/\s]+|:\d*|localhost:\d+|[\w.-]+:\d+|\$\{?[A-Z][A-Z0-9_]*\}?)(/[^\s#]*)?$",
                  re.IGNORECASE)  # ($UPSTASH_REDIS_REST_URL/flushdb: the base URL from the environment)


# An API told what to do by a named field: Kea's `{"command": "lease4-wipe"}`, PAN-OS's `?type=op&cmd=<request>
# <shutdown>...` and `action=delete`, ksqlDB's `{"ksql": "DROP STREAM ..."}`.
_COMMAND_FIELD = re.compile(r"""(?i)(?:"(?:command|cmd|action|operation|op|ksql|sql|statement|type|step|method|task)"\s*:\s*"([^"]+)"
                            |(?:^|[?&\s])(?:cmd|command|action|op|operation)=([^&\s'"]+))""", re.VERBOSE)


def _commanded(inv: Invocation) -> VerbFinding | None:
    for arg in inv.args:
        for found in _COMMAND_FIELD.finditer(arg):
            value = found.group(1) or found.group(2)
            words = [p for w in re.split(r"[\s<>/;,%()]+", value.lower()) if w for p in parts(w)]
            verb = next((w for w in words[:6] if w in DESTROYS or w in TAKES_DOWN or w in ("restart", "reboot")), None)
            if verb and not KEEPS & set(words) and not CACHES & set(words):
                context = {p for a in inv.args for w in re.split(r"[\W_]+", a.lower()) if w for p in parts(w)}
                return VerbFinding(_classify(verb, context) or "takes_down", value)
    return None


# Groovy run in the Jenkins controller (/scriptText, jenkins-cli groovy): it can do anything Jenkins can. A script
# that only reads (println, collect) is a query; one that changes state, or whose text is not on the line, is not.
_GROOVY_CHANGES = re.compile(r"\.(?:delete|doDelete|remove\w*|set[A-Z]\w*|save|disable|doDisable|makeDisabled|cancel\w*"
                             r"|interrupt|execute|clear\w*|purge\w*|reload|restart|safeRestart|doSafeExit|doExit|kill|stop"
                             r"|add\w*|put|revoke\w*)\s*\(|System\.exit|\.execute\(\)|Runtime\.getRuntime")


def groovy_run(inv: Invocation) -> VerbFinding | None:
    """Groovy sent to Jenkins' script console that changes state or is not shown, or None."""
    if inv.program.lower() in HTTP_CLIENTS:
        scripts = [a.split("=", 1)[1] for a in inv.args if a.startswith("script=")]
        if not scripts or not any("scripttext" in a.lower() or "/script" in a.lower() for a in inv.args):
            return None
    elif inv.program.lower() == "java" and "groovy" in inv.args and any(a.endswith("jenkins-cli.jar") for a in inv.args):
        scripts = [inv.stdin if inv.stdin_from == "literal" and inv.stdin else "$unseen"]
    else:
        return None
    for script in scripts:
        if script.startswith(("$", "@")) or "$(" in script or "`" in script:
            return VerbFinding("weakens_security", "a Groovy script the line does not show")
        found = _GROOVY_CHANGES.search(script)
        if found:
            return VerbFinding("destroys_data" if re.match(r"\.(?:delete|doDelete|remove|purge|clear)", found.group())
                               else "weakens_security", found.group())
    return None


def http_effect(inv: Invocation) -> VerbFinding | None:
    """What a writing HTTP call to an API does, read from its URL's path and query words (or, for any
    method, from a field that names the command)."""
    if inv.program.lower() not in HTTP_CLIENTS:
        return None
    if http_method(inv) not in HTTP_WRITES:
        return _commanded(inv)
    granted = next((a for a in inv.args if _ADMIN_BODY.search(a) or _PUBLIC_BODY.search(a)), None)
    if granted:
        return VerbFinding("weakens_security", granted)
    switched = _setting_switched_off(inv)
    if switched:
        return VerbFinding("weakens_security", switched)
    off = _body_switched_off(inv)
    if off:
        return off
    for arg in inv.args:
        found = _URL.match(arg)
        if not found or not found.group(1):
            continue
        words = [w for w in re.split(r"[/?&=]+", found.group(1)) if w and w not in _HARMLESS_ENDPOINTS]
        every = [p for w in words for p in parts(w)]
        for word in every:
            effect = API_VERBS.get(word) or _classify(word, every)
            if effect and not _scoped_body(inv, word):
                return VerbFinding(effect, found.group(1))
    return _commanded(inv)


# Endpoints whose name sounds destructive but only persist or reload (Elasticsearch's _flush writes segments to disk).
_HARMLESS_ENDPOINTS = frozenset({"_flush", "_refresh", "_synced"})
# A body that makes someone an administrator (Grafana's `{"role":"Admin"}`), or maps everyone to a role.
_ADMIN_BODY = re.compile(r'"cluster"\s*:\s*\[\s*"all"\s*\]|"action"\s*:\s*"disable"'
                         r'|"(?:role|orgRole|roles?)"\s*:\s*\[?\s*"(?:Admin|Administrator|admin|superuser|owner|Owner|GrafanaAdmin)"'
                         r'|"(?:users|backend_roles|hosts)"\s*:\s*\[\s*"\*"\s*\]|"isGrafanaAdmin"\s*:\s*true'
                         # NetBox's is_superuser, Okta's {"type":"SUPER_ADMIN"}, PAN-OS's <superuser>yes</superuser>
                         r'|"(?:is_?)?(?:super_?user|super_?admin|site_?admin|admin|staff)"\s*:\s*"?true\b'
                         r'|"(?:type|role|roleType)"\s*:\s*"(?:SUPER_?ADMIN|ORG_?ADMIN|APP_?ADMIN|GLOBAL_?ADMIN\w*)"'
                         r'|(?:<|_)superuser(?:>|_)\s*yes\s*</superuser>', re.IGNORECASE)  # (`<x>` reaches here as `_x_`)
_PUBLIC_BODY = re.compile(r'"(?:public|is_public|publicAccess|allowPublic)"\s*:\s*"?true\b'
                          r'|"enabled"\s*:\s*true\s*,\s*"userId"\s*:\s*"anonymous"')  # Harbor, Nexus's anonymous access
# A settings endpoint of a protection (Cloudflare's /settings/ssl, /settings/always_use_https, a WAF's mode)
# written with a body that switches it off.
_PROTECTION_PATH = re.compile(r"(?i)/(?:settings|config)/[^\s?&]*?(?:ssl|tls|https|waf|security|auth|mfa|firewall|bot_fight"
                              r"|hsts|encryption)\w*")
_OFF_BODY = re.compile(r'(?i)"(?:value|enabled|mode|status)"\s*:\s*(?:"(?:off|false|disabled?|essentially_off|none|down)"|false)'
                       r'|(?:<|_)disabled(?:>|_)\s*yes\s*</disabled>|(?:<|_)(enabled?|log[-\w]*)(?:>|_)\s*(?:no|false)\s*</\1>')  # (XML)


# A write whose body switches something off: `{"enabled":false}`, `{"ingressEnabled":false}`, `{"paused":true}`,
# `disabled=1`, a bare `false` PUT to .../enabled; a protection's own switch (`"prevent_vul":"false"`).
_SWITCHED_OFF_BODY = re.compile(r'(?i)"(\w*enabled?\w*)"\s*:\s*"?(?:false|0)\b|"(paused|suspended|disabled|is_?disabled)"\s*:\s*"?(?:true|1)\b'
                       r'|"(active|activated)"\s*:\s*false\b|^(disabled|paused)=(?:1|true)$'
                       # Elasticsearch: shards moved off a node (it is drained), allocation switched off
                       r'|"(cluster\.routing\.allocation\.exclude\._(?:ip|name|host))"\s*:\s*"[^"]+"')
_LOOSENING_BODY = re.compile(r'(?i)"((?:prevent|protect|verify|require|enforce|secure|scan|auto_scan|auth)\w*)"\s*:\s*"?(?:false|0)\b'
                           r'|"(\w*auto_?confirm\w*|self_?registration|\w*allow_?(?:anonymous|public|insecure)\w*)"\s*:\s*"?true\b'
                           r'|"(no_match|default_?(?:action|policy))"\s*:\s*"(?:allow|accept|permit)"|"verify"\s*:\s*"verify_none"')
_SWITCH_PATH = re.compile(r"(?i)/(?:enabled|authorized|active)/?$")


def _body_switched_off(inv: Invocation) -> VerbFinding | None:
    """What a write's body switches off: a protection (weakens security), or anything else (takes it down)."""
    bodies = option_values(inv.args, frozenset(_DATA_FLAGS)) + [a for a in inv.args if ":=" in a]  # (httpie: x:=false)
    for body in bodies:
        loosened = _LOOSENING_BODY.search(body)
        if loosened:
            return VerbFinding("weakens_security", loosened.group())
        off = _SWITCHED_OFF_BODY.search(body)
        if off and not OPENINGS.search(off.group()) and not re.search(r"(?i)debug|trace|verbose", off.group()):
            name = next(g for g in off.groups() if g)
            return VerbFinding("weakens_security" if SECURITY_NOUNS & set(parts(name)) else "takes_down", off.group())
        if body.strip().lower() == "false" and any(_SWITCH_PATH.search(a) for a in inv.args):
            return VerbFinding("takes_down", body)  # TeamCity: PUT false to .../agents/id:14/enabled
    return None


def _setting_switched_off(inv: Invocation) -> str | None:
    path = next((a for a in inv.args if _PROTECTION_PATH.search(a)), None)
    return path if path and any(_OFF_BODY.search(a) for a in inv.args) else None


_SCOPED = {  # a body that names what the call touches: a CDN purge of listed files, a downtime for one host
    "purge": re.compile(r'"(?:files|prefixes|tags|hosts)"\s*:'),
    "downtime": re.compile(r'"scope"\s*:\s*"(?!\*)[^"]+"'),
    "mute": re.compile(r'"scope"\s*:\s*"(?!\*)[^"]+"'),
    "silences": re.compile(r'"value"\s*:\s*"(?!\.\*|\.\+)[^"]+"'),  # a silence for one alert, not every one
}


def _scoped_body(inv: Invocation, word: str) -> bool:
    scoped = _SCOPED.get(word)
    return bool(scoped) and any(scoped.search(a) for a in inv.args)


def http_method(inv: Invocation) -> str:
    """The HTTP method: -X/--request/--method, httpie's leading METHOD, else POST when data is sent."""
    args = list(inv.args)
    for n, arg in enumerate(args):
        low = arg.lower()
        if low in ("-x", "--request", "--method") and n + 1 < len(args):
            return args[n + 1].lower()
        if arg.startswith("-X") and len(arg) > 2:
            return low[2:]  # curl -XPOST
        for prefix in ("--request=", "--method="):
            if low.startswith(prefix):
                return low[len(prefix):]
    for arg in args:  # httpie: `http POST URL`, also after its options' values (`http -a user:pw PUT URL`)
        if arg.lower() in ("post", "put", "patch", "delete", "get", "head"):
            return arg.lower()
        if not arg.startswith("-") and ("://" in arg or arg.startswith((":", "localhost")) or "/" in arg):
            break  # the URL: a method word after it is a request item, not the method
    if any(a.split("=", 1)[0] in _DATA_FLAGS for a in args) or any(_XML_API_WRITE.search(a) for a in args):
        return "post"
    return "get"


# PAN-OS's XML API changes the configuration through a GET: `/api/?type=config&action=set&xpath=...`.
_XML_API_WRITE = re.compile(r"[?&]type=config&(?:.*&)?action=(?:set|edit|delete|move|rename|override)\b", re.IGNORECASE)


# Options through which a tool's own console runs one of its commands: `asterisk -rx "core stop now"`,
# `fs_cli -x "fsctl shutdown elegant"`, `gluster --mode=script -e ...`. Their value, when it is several
# words, is judged as the tool's subcommand line.
COMMAND_OPTIONS = frozenset({"-x", "-rx", "-e", "--execute", "--exec", "-c", "--command", "--cmd", "-cmd", "-q", "--query",
                             "--eval", "-r"})


def _console_commands(inv: Invocation) -> list[Invocation]:
    args = inv.args
    values = []
    if inv.program.lower() not in _PROSE_PROGRAMS:  # dsmadmc -id=admin "delete filespace X *", dgmgrl sys@DB "REMOVE ..."
        values = [a for n, a in enumerate(args) if (n == 0 or not args[n - 1].startswith("-") or "=" in args[n - 1])
                  and " " in a.strip() and a.split(None, 1)[0].lower() in DESTROYS | TAKES_DOWN]
    values = [v.split(None, 1)[0].lower() + v.strip()[len(v.split(None, 1)[0]):] for v in values]  # REMOVE DATABASE x
    if inv.program.lower() in STATEMENT_READERS:  # (their -e/-c and quoted statements: the SQL rules read them)
        return [Invocation(program=inv.program, args=tuple(v.split())) for v in values if not looks_like_sql(v)]
    values += [args[n + 1] for n, a in enumerate(args[:-1]) if a in COMMAND_OPTIONS]
    values += [a.split("=", 1)[1] for a in args if "=" in a and a.split("=", 1)[0] in COMMAND_OPTIONS]
    values = [v for v in values if " " in v.strip() or "\n" in v]
    if inv.stdin_from == "literal" and inv.stdin and inv.program.lower() not in WRITERS | STATEMENT_READERS \
            and not language(inv.program):
        values.append(inv.stdin)
    # several commands in one value or heredoc: a device's `configure; delete protocols bgp; commit`
    lines = [line.strip() for v in values for line in re.split(r"[;\n]", v)[:MAX_CONSOLE_LINES] if line.strip()]
    # (a one-word line ends a console session, `halt`, `quit`; but a device's `shutdown` under an interface stops it)
    return [Invocation(program=inv.program, args=tuple(line.split())) for line in lines
            if " " in line or line.lower() == "shutdown"]


# Programs whose quoted words are messages, names or patterns, not a console's commands.
_PROSE_PROGRAMS = frozenset({"git", "logger", "mail", "mailx", "sendmail", "notify-send", "wall", "zenity", "osascript",
                             "say", "gh", "glab", "jira", "slack", "curl", "wget", "http", "jq", "yq", "sed", "awk",
                             "grep", "egrep", "rg", "find", "tmux", "screen", "docker", "podman", "kubectl", "helm",
                             "terraform", "ansible", "ansible-playbook", "salt", "pdsh", "ssh", "timeout", "watch",
                             "nohup", "xargs", "parallel", "sudo", "su", "env", "time", "nice", "ionice", "stdbuf", "trap",
                             "sql", "select-string", "findstr", "where-object"})  # (an SQL statement: the SQL rules read it)


# A console's commands in a heredoc (`mccommand <<EOF channel stop X EOF`) are read line by line; what
# these programs read is text they store or send, not commands.
WRITERS = frozenset({"tee", "dd", "sponge", "install", "base64", "openssl", "gpg", "kubectl", "oc", "curl", "wget",
                     "mail", "sendmail", "mailx", "nc", "ncat", "socat", "logger", "xclip", "pbcopy", "wc", "sort"})
MAX_CONSOLE_LINES = 50
# Clients whose input is statements the SQL and datastore rules read (`mysql db <<'SQL' SELECT ... SQL`), not a console's verbs.
STATEMENT_READERS = frozenset({"psql", "mysql", "mariadb", "sqlplus", "sqlcmd", "clickhouse-client", "clickhouse", "cqlsh",
                               "db2", "hdbsql", "snowsql", "trino", "presto", "bq", "sqlite3", "duckdb", "mongosh", "mongo",
                               "redis-cli", "valkey-cli", "rman", "dgmgrl", "isql", "bteq", "vsql", "usql", "beeline",
                               "spark-sql", "hive", "impala-shell", "influx", "cockroach", "gitlab-psql", "ysqlsh"})


# Options that name what is done: `oci compute instance action --action STOP`, `sapcontrol -function StopSystem`.
ACTION_OPTIONS = frozenset({"--action", "-action", "-function", "--function", "--operation", "-operation", "--op"})
# A method called by name in the code a console runs: `##class(SYS.Database).DeleteDatabase(...)`,
# `##class(Ens.Director).StopProduction()`, a Groovy script's `it.delete()`.
_METHOD = re.compile(r"(?:[.:]|->)([A-Za-z][A-Za-z0-9]*)\s*\(")


def _named_actions(inv: Invocation) -> VerbFinding | None:
    """A verb that an option names as the action, a long option that is itself the verb (`--removenode`,
    `--delete`), or a method named by a strong verb in the code the line carries."""
    args = list(inv.args)
    lead = next((a for a in args if not a.startswith("-")), "")
    if parts(lead)[:1] and parts(lead)[0] in READS:
        return None  # `gitlab-runner verify --delete`: checks, and forgets runners that are gone
    granting = bool({"acl", "acls"} & set(parts(inv.program))) or any(a.startswith("--allow") for a in args)
    back_in_service = bool(_MAINTENANCE & set(map(str.lower, args)))  # `consul maint -disable`
    for n, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name.lower() in ACTION_OPTIONS and (eq or n + 1 < len(args)):
            split = parts(value if eq else args[n + 1])
            verb = next((p for p in split[:1] if p in COMPOUND_LEADS or p in ("reset", "reboot", "poweroff")), None)
            if verb:
                return VerbFinding("destroys_data" if verb in DESTROYS else "takes_down", arg)
        if arg.startswith("--") and not eq and len(arg) > 4:
            split = parts(arg[2:])
            if split and split[0] in ("remove", "delete", "destroy", "purge", "wipe", "drop", "erase", "eradicate") \
                    and not (set(split[1:]) & (_HARMLESS_REMOVALS | _ACCESS_LISTS)) and not granting:
                return VerbFinding("destroys_data", arg)
        # a long option that is the verb alone: `plesk bin subscription --suspend NAME`, `restartsrv_mysql --stop`
        # (not `--stop 2024-06-12T11:00:00Z`, the end of a time range)
        if arg[2:].lower() in _BARE_STOPS and not eq and not back_in_service \
                and not (n + 1 < len(args) and _TIME_VALUE.match(args[n + 1])):
            return VerbFinding("takes_down", arg)
        # a Windows command's slash option that is the action: `dnscmd DC01 /RecordDelete ...`, `/ZoneDelete`
        if _SLASH_ACTION.match(arg):
            split = parts(arg[1:])
            verb = next((p for p in (split[0], split[-1]) if p in COMPOUND_LEADS), None)
            if verb and len(split) > 1 and not (set(split) & (_HARMLESS_REMOVALS | _ACCESS_LISTS | ACCOUNTS)):
                return VerbFinding("destroys_data" if verb in DESTROYS else "takes_down", arg)
        # a single-dash long option that is the action: `yarn application -kill ID`, `hdfs dfs -deleteSnapshot`,
        # PowerShell's `Set-HVPool -Disable`, `Remove-VM -DeletePermanently`
        following = args[n + 1].lower() if n + 1 < len(args) else ""
        if _DASH_ACTION.match(arg) and not eq and following not in ("$false", "false", "0") \
                and not back_in_service:  # not -DisableX $false; not `consul maint -disable`
            split = parts(arg[1:])
            if split[0] in _DASH_VERBS and not (set(split[1:]) & (_HARMLESS_REMOVALS | _ACCESS_LISTS)) and not granting:
                return VerbFinding("destroys_data" if split[0] in DESTROYS else "takes_down", arg)
    texts = [a for a in args if "(" in a] + ([inv.stdin] if inv.stdin_from == "literal" and inv.stdin else [])
    for text in texts:
        for method in _METHOD.findall(text):
            split = parts(method)
            if split and split[0] in COMPOUND_LEADS and not (set(split[1:]) & (_HARMLESS_REMOVALS | {"one", "op"})):
                return VerbFinding("destroys_data" if split[0] in DESTROYS else "takes_down", method)
    return None


_BARE_STOPS = frozenset({"suspend", "stop", "shutdown", "halt", "poweroff", "kill", "disable", "deactivate", "pause"})
_TIME_VALUE = re.compile(r"^[\d'\"-]|^now|^\$")  # a date, a number, now-1h, a variable holding a time
_SLASH_ACTION = re.compile(r"^/[A-Z][a-z]+(?:[A-Z][a-z]+)+$")  # /RecordDelete, /ZoneDelete, /DeleteShadows
_NOUN_VERBS = frozenset({"failover", "switchover", "takeover", "disconnect", "down", "offline", "standby"})
_MAINTENANCE = frozenset({"maint", "maintenance", "eligibility", "downtime", "silence"})  # switched off: back in service
_DASH_ACTION = re.compile(r"^-[A-Za-z][a-z]{3,}(?:[A-Z][a-z]+)*$")  # -kill, -expunge, -deleteSnapshot, -Disable
_DASH_VERBS = frozenset({"delete", "remove", "kill", "expunge", "purge", "destroy", "wipe", "erase", "drop", "disable",
                         "shutdown", "terminate", "truncate"})


# who may connect: removing a client, host or principal from an access list takes access away (it hardens)
_ACCESS_LISTS = frozenset({"client", "clients", "host", "hosts", "principal", "principals", "user", "users", "member",
                           "members", "access", "acl", "acls", "ip", "ips", "address", "addresses", "allow"})
# what a removal option removes that loses nothing: leftovers, temporary files, the tool's own lock or cache
_HARMLESS_REMOVALS = frozenset({"orphans", "orphan", "temp", "tmp", "cache", "caches", "lock", "locks", "after", "before",
                                "during", "excluded", "delay", "source", "files", "stale", "dangling", "unused", "old",
                                "leftovers", "intermediate", "signature", "quarantine"})


# A network device's configuration lines: `neighbor X shutdown`, `no router bgp 64512`, `clear ip bgp *`.
_DEVICE_DOWN = re.compile(r"(?i)^(?!no\s)(?:.*\s)?shutdown$|^no\s+(?:router|neighbor|interface|ip\s+route|vlan|route-map|"
                          r"address-family|vrf|ipv6\s+route|network)\b|^clear\s+(?:ip\s+)?bgp\s+(?:neighbor\s+)?(?:\*|all)(?!.*\bsoft\b)"
                          # Junos: `set interfaces xe-0/0/3 disable`, `deactivate protocols bgp`, `delete interfaces`
                          r"|^set\s+(?:interfaces|protocols|vlans|routing-instances)\s.*\bdisable$"
                          r"|^(?:deactivate|delete)\s+(?:interfaces|protocols|routing-options|routing-instances|vlans"
                          r"|policy-options|security|firewall|system|chassis|class-of-service)\b"
                          r"|^request\s+system\s+(?:zeroize|halt|power-off|reboot)"
                          # Huawei VRP's `undo` is `no`; `reset bgp all`; SR OS and PAN-OS state words
                          r"|^undo\s+(?:bgp|ospf|isis|peer|interface|vlan|ip\s+route-static|vrrp|eth-trunk|vpn-instance)\b"
                          r"|^reset\s+(?:bgp|ospf|isis)\s+(?:\d+\s+)?(?:all|\*)|^reset\s+saved-configuration\b"
                          r"|\badmin-state\s+disable\b|\blink-state\s+down\b"
                          r"|^set\s+status\s+disable$"  # FortiOS: the policy, interface or log target being edited is off
                          # a configuration file the line does not show merged into the running one
                          r"|^copy\s+(?:tftp|ftp|https?|scp|sftp|usb\w*|flash|bootflash|disk0)\S*\s+(?:system:)?running-config\b")
# A device's configuration lines that open it: telnet, root logins, a user with no password, an ACL or remote
# logging removed (`set system services telnet`, `username x privilege 15 nopassword`, `no ip access-group MGMT in`).
_DEVICE_OPENS = re.compile(r"(?i)^set\s+system\s+services\s+(?:telnet|ftp|http)\b|\broot-login\s+allow\b"
                           r"|^username\s+\S+.*\bnopassword\b|^no\s+(?:ip\s+|ipv6\s+)?access-(?:group|class|list)\b"
                           r"|^no\s+logging\s+(?:host|server|\d)|^no\s+aaa\s|^no\s+service\s+password-encryption"
                           r"|^no\s+(?:ip\s+)?ssh\s+(?:server\s+)?(?:version\s+2|authentication)|^ip\s+http\s+server$"
                           # RouterOS: `/ip service enable telnet`, `/user set admin password=""`
                           r"|\bservice\s+enable\s+(?:telnet|ftp|www|api)\b|\bpassword=(?:\"\"|''|$)"
                           r"|^feature\s+telnet\b"  # NX-OS
                           # telnet in other dialects: ProCurve/SR OS `telnet-server`, VRP `telnet server enable`,
                           # IOS-XR `telnet vrf default ipv4 server`, IOS `transport input telnet`, PAN-OS
                           r"|^(?:configure\s+)?(?:system\s+security\s+)?telnet-server\b"
                           r"|^telnet\s+(?:server\s+enable|(?:vrf\s+\S+\s+)?ipv[46]\s+server)\b"
                           r"|\btransport\s+input\s+(?:\w+\s+)*?(?:telnet|all)\b|\bdisable-telnet\s+no\b"
                           # a writable SNMP community (VRP), every password removed (ProCurve), a protection removed
                           r"|^snmp-agent\s+community\s+write\b|^no\s+password\s+all\b"
                           r"|^(?:no|undo)\s+(?:ip\s+)?(?:dhcp[- ]snooping|arp\s+inspection|port-security|storm-control)\b"
                           r"|^undo\s+info-center\s+(?:enable|loghost)\b|\blog-end\s+no\b")


def device_opened(inv: Invocation) -> str | None:
    """A device configuration line that opens the device, however the line reached us (RouterOS over ssh too)."""
    found = _DEVICE_OPENS.search(" ".join((inv.program.lstrip("/"), *inv.args)))
    return found.group() if found else None


def _device_line(line: str) -> VerbFinding | None:
    line = line.strip()
    if _DEVICE_OPENS.search(line):
        return VerbFinding("weakens_security", line)
    return VerbFinding("takes_down", line) if _DEVICE_DOWN.search(line) else None


# A device's configuration lines carried by an API call or an automation module: Arista eAPI's
# `"cmds": ["enable", "configure", "no router bgp 65001"]`, Ansible's `*_config` modules' `lines='shutdown'`.
_EAPI_CMDS = re.compile(r'"cmds"\s*:\s*\[([^\]]*)\]')
_ANSIBLE_LINES = re.compile(r"(?:^|\s)lines=(?:(['\"])(.*?)\1|\[([^\]]*)\]|(\S+))")


def carried_config_lines(inv: Invocation) -> list[str]:
    """Device configuration lines an API body or an Ansible module's arguments carry."""
    lines: list[str] = []
    for arg in inv.args:
        for found in _EAPI_CMDS.finditer(arg):
            lines += re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1))
        for found in _ANSIBLE_LINES.finditer(arg):
            text = found.group(2) or found.group(3) or found.group(4) or ""
            lines += [w.strip(" '\"") for w in re.split(r"[,\n]", text)] if found.group(3) else [text]
    return [line for line in lines if line.strip()]


_DEVICE_WORDS = frozenset({"no", "clear", "neighbor", "interface", "configure", "router", "copy", "undo", "reset", "set"})


# Tools whose install and uninstall verbs only print manifests (`linkerd uninstall | kubectl delete -f -`): what
# consumes them is judged there.
_RENDERS = {"linkerd": frozenset({"install", "uninstall", "upgrade", "prune"})}


def verb_effect(inv: Invocation) -> VerbFinding | None:
    """What the verb of a command does, when it deletes, stops or disables something (also in a
    command its console option carries, an action an option names, a method the code calls)."""
    if inv.program in _RENDERS and any(a in _RENDERS[inv.program] for a in inv.args[:1]) and "--help" not in inv.args:
        return None
    if re.fullmatch(r"/[a-z][a-z-]*", inv.program):  # RouterOS: /ip route remove [find ...]
        inv = replace(inv, program=inv.program[1:])  # (a line that opens the router: device_opened, before any verb)
    found = _verb_effect(inv)
    if found is None and inv.program in _DEVICE_WORDS:
        found = _device_line(" ".join((inv.program, *inv.args)))
    if found is None:
        found = next((f for line in carried_config_lines(inv) if (f := _device_line(line)) is not None), None)
    if found is None and inv.program.lower() not in HTTP_CLIENTS | _PROSE_PROGRAMS and any("{" in a for a in inv.args):
        found = _commanded(inv)  # a device command over MQTT (`-m '{"action":"reboot"}'`), a cleaning step, a task
    if found is None and inv.program.lower() not in HTTP_CLIENTS:
        found = next((f for sub in _console_commands(inv)
                      if (f := _verb_effect(sub) or _device_line(" ".join(sub.args))) is not None), None)
    if found is None and inv.program.lower() not in HTTP_CLIENTS | SOFTWARE | READ_PROGRAMS | SANDBOXES \
            and not _HELP & set(inv.args) and not language(inv.program):
        found = _named_actions(inv) or _admin_granted(inv)
    return found


# Everyone given access: a share, an ACL, a firewall's allow or ignore list, a role binding
# (`-user-or-group Everyone -permission Full_Control`, `/grant "Domain Users":M`, `addignoreip 0.0.0.0/0`,
# `--group=system:authenticated`, `TO \`account users\``).
_EVERYONE = re.compile(r"(?i)(?<![\w-])(?:everyone|domain users|authenticated users|anonymous logon|system:authenticated"
                       r"|system:unauthenticated|allusers|allauthenticatedusers|account users|0\.0\.0\.0/0|::/0"
                       # ZooKeeper's world:anyone, Globus's --all-authenticated, PBS's *@* (every user on every host)
                       r"|world:anyone|--all-authenticated|\*@\*)(?![\w-])")
_GRANTS = frozenset({"grant", "allow", "add", "create", "set", "permission", "permissions", "acl", "access", "ignoreip",
                     "addignoreip", "whitelist", "allowlist", "trusted", "full", "modify", "append", "rolebinding",
                     "clusterrolebinding", "authorize", "ingress", "accept", "wellknown", "authadd", "rw", "export"})
_REFUSES = frozenset({"deny", "block", "reject", "drop", "remove", "delete", "revoke", "del", "rm", "unban", "ban",
                      "egress", "outbound", "route", "via", "gateway", "default"})


_PRINCIPAL_OPTIONS = frozenset({"role", "principal", "allow", "user", "group", "subject", "grantee"})


def _every_principal(args: tuple[str, ...]) -> str | None:
    """`--role '*'`, `consul intention create -allow '*' '*'`: a principal option given every one."""
    for n, arg in enumerate(args):
        if arg == "*" and n and (args[n - 1].lstrip("-").lower() in _PRINCIPAL_OPTIONS or args[n - 1] == "*"):
            return f"{args[n - 1]} *"
    return None


# A firewall rule that lets any source in: `permit ip any any`, `action allow source address any`,
# `{"action":"pass","source_net":"any"}`, FortiGate's `"srcaddr":[{"name":"all"}]`, PAN-OS `<source><member>any`.
_ANY_SOURCE = re.compile(r"(?i)\bpermit\s+(?:ip|tcp|udp|icmp|any)\s+any\s+any\b"
                         r"|\b(?:source|src)[-_ ]?(?:address|addr|net|ip|cidr)?[\"'>_]*\s*[:=]?\s*"
                         r"(?:\[\s*\{\s*\"name\"\s*:\s*)?[\"'<_]*(?:member[>_])?(?:any|all|0\.0\.0\.0/0)(?![\w.-])")
_ALLOWS = re.compile(r"(?i)\b(?:allow|accept|pass|permit)\b|\bservice[\"'\s:=\[{]*(?:\"name\"\s*:\s*)?\"?all\b")
_DENIES = re.compile(r"(?i)\b(?:deny|drop|reject|block|discard)\b")


def any_source_allowed(inv: Invocation) -> str | None:
    """A firewall rule, in a device's words or an API body, that lets any source in."""
    if inv.program.lower() in HTTP_CLIENTS and http_method(inv) not in HTTP_WRITES:
        return None
    words = [inv.program, *inv.args]
    if any(parts(w)[:1] and parts(w)[0] in READS for w in words[:3]):
        return None
    text = " ".join(words)
    found = _ANY_SOURCE.search(text)
    return found.group() if found and _ALLOWS.search(text) and not _DENIES.search(text) else None


def everyone_granted(inv: Invocation) -> VerbFinding | None:
    """Access given to everyone (whatever rules the tool has: a grant to everyone is news)."""
    if inv.program.lower() in READ_PROGRAMS | HTTP_CLIENTS:
        return None
    text = " ".join(inv.args)
    found = _EVERYONE.search(text)
    everyone = found.group() if found else _every_principal(inv.args)
    if not everyone:
        return None
    words = {p for w in (inv.program, *inv.args) for chunk in re.split(r"[\s/:=,()\"']+", w) if chunk
             for p in parts(chunk)} | {w.lower().lstrip("-/") for w in inv.args}
    leading = {p for w in (inv.program, *[a for a in inv.args if not a.startswith("-")][:2]) for p in parts(w)}
    if leading & READS or words & _REFUSES or not words & _GRANTS:
        return None
    return VerbFinding("weakens_security", everyone)


# An option that makes someone an administrator: `--admin true`, `--roles admin`, `-Role Admin`,
# `-AccessRights FullAccess`, `--rbac-role cluster-admin`; or a subcommand named for it (`grant-cluster-admin-role`).
_ROLE_OPTION = re.compile(r"(?i)^--?(?:[\w-]*[-_])?(?:roles?|access-?rights|privileges?|permission-?level|access-?level)$")
_ADMIN_OPTION = re.compile(r"(?i)^--?(?:is[-_]?)?(?:admin|superuser|super-user|sysadmin|site-?admin|grafana-?admin)$")
_ADMIN_ROLE = re.compile(r"(?i)^[\"']?(?:admin|administrator|administrators|superuser|super-user|owner|fullaccess|full"
                         r"|cluster-admin|root|sysadmin|globaladmin|global administrator|org-?admin|account-?admin"
                         r"|%all)[\"']?$")
_ADMIN_VERB = re.compile(r"(?i)(?:^|[-_])(?:grant|add|assign|make|promote|set)[-_](?:[\w-]*[-_])?(?:admin|superuser|owner)"
                         r"(?:[-_]role)?$")


def _admin_granted(inv: Invocation) -> VerbFinding | None:
    args = list(inv.args)
    named = {p for w in (inv.program, *args[:3]) for p in parts(w)}
    if named & READS or named & {"remove", "revoke", "delete", "detach", "unassign", "del", "rm"}:
        return None  # listing who is admin, or taking the role away
    for n, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        value = value if eq else (args[n + 1] if n + 1 < len(args) else "")
        if _ROLE_OPTION.match(name) and _ADMIN_ROLE.match(value):
            return VerbFinding("weakens_security", f"{name} {value}")
        if _ADMIN_OPTION.match(name) and value.strip("'\"").lower() in ("true", "yes", "1", "$true"):
            return VerbFinding("weakens_security", f"{name} {value}")
        if not arg.startswith("-") and n < MAX_LEADING and _ADMIN_VERB.search(arg):
            return VerbFinding("weakens_security", arg)
    return None


def _verb_effect(inv: Invocation) -> VerbFinding | None:
    groovy = groovy_run(inv)  # (curl to /scriptText, or java -jar jenkins-cli.jar groovy)
    if groovy is not None:
        return groovy
    if inv.program.lower() in HTTP_CLIENTS:
        return http_effect(inv)
    program = inv.program
    if not program or program.lower() in SOFTWARE | SANDBOXES | READ_PROGRAMS or _PS_READS.match(program):
        return None
    if _removes_opening(" ".join(inv.args)) or _HELP & set(inv.args):
        return None  # removing or disabling an opening (Everyone's access, SMB1, telnet, the guest) hardens; help
    found = _powershell(program, inv.args) or _service_account_disabled(inv)
    if found is not None or not _PROGRAM.match(program):
        return found  # not a command: prose ("Terraform will destroy..."), a heading, output
    found = _named_by_verb(program)
    if found is not None:
        return found
    words = leading_words(inv)[1:]
    every = {p for w in words for p in parts(w)}
    if ACCOUNTS & (every | set(parts(program))) and not (DESTROYS - {"disable"}) & every:
        return None  # disabling an account is offboarding (openings were let through above)
    if KEEPS & every or CACHES & every or ACCESS_ENTRIES & every:
        return None  # `wal-g delete retain FULL 7` keeps seven; `resolvectl flush-caches` empties a cache
    reads = any(parts(w)[:1] and parts(w)[0] in READS for w in words)
    for n, word in enumerate(words):
        split = parts(word)
        if not split or word.isupper():
            continue  # an upper-case word is a value or a keyword (`--action STOP`, SQL's DELETE)
        if reads and split[0] in _NOUN_VERBS:
            return None  # `storage failover show`, `cluster takeover status`: the verb names what is shown
        if split[0] in READS:
            return None  # `vault audit list`, `kubectl auth can-i delete`
        if split[-1] == "off" and (len(split) == 2 or word == words[0]):
            return VerbFinding("takes_down", word)  # acli vm.off, -Action TurnOff, tuned-adm off
        for verb in _verbs(word, split):
            effect = _classify(verb, every)
            if effect:  # (unless a later word asks how it is going: `mc admin decommission status`,
                # `gluster volume remove-brick gv0 host:/brick status`)
                asks = [*words[n + 1:], *inv.args[-1:]]
                return None if _PROGRESS.intersection(w.lower() for w in asks) else VerbFinding(effect, word)
    return None


_PROGRESS = frozenset({"status", "progress"})


_SERVICE_ACCOUNT = re.compile(r"(?i)^(?:svc|srv|sa|service|app)[-_.]|[-_.](?:svc|service)$|^svc")


# PowerShell's reading and filtering cmdlets: their words are values (`Where-Object PowerState -eq 'PoweredOff'`)
_PS_READS = re.compile(r"(?i)^(?:get|where|select|sort|format|measure|group|out|test|find|show|compare|read)-\w+$")


def _service_account_disabled(inv: Invocation) -> VerbFinding | None:
    """Disabling a person's account is offboarding; disabling a service's account stops the service (Disable-ADAccount svc_x)."""
    if inv.program.lower() not in ("disable-adaccount", "disable-localuser"):
        return None
    named = [a.strip("'\"").split("\\")[-1] for a in inv.args if not a.startswith("-")]
    return VerbFinding("takes_down", inv.program) if any(_SERVICE_ACCOUNT.search(n) for n in named) else None


def _named_by_verb(program: str) -> VerbFinding | None:
    """A script or tool named for what it does: `kafka-server-stop.sh`, `k3s-uninstall.sh`,
    `kafka-delete-records.sh` (one-word names such as `truncate` or `shred` are tools with rules)."""
    split = parts(re.sub(r"\.(sh|bash|py|pl|rb|ps1|cmd|bat)$", "", program))
    if len(split) < 2:
        return None
    verb = next((p for p in split if p in COMPOUND_LEADS), None)
    if verb is None or any(p in READS for p in split) or any(p.endswith(tuple(ACCESS_ENTRIES)) for p in split):
        return None
    if verb == "disable" and ACCOUNTS & set(split):
        return None  # disable-adaccount: someone left
    return VerbFinding("destroys_data" if verb in DESTROYS else "takes_down", program)


_QUALIFIERS = frozenset({"admin", "batch", "bulk", "force", "forced", "mass", "hard"})


def _verbs(word: str, split: list[str]) -> list[str]:
    """The parts of a subcommand that can be its verb: the word itself; in a compound, a leading
    strong verb (`delete-hosted-zone`, `stop_app`, `eraseDisk`) or the verb of a noun-verb pair
    (`bucket-flush`, heroku's `pg:reset`); `safe-to-destroy` and `ok-to-stop` ask, they do not do."""
    if len(split) == 1:
        return split
    verbs = [split[0]] if split[0] in COMPOUND_LEADS else []
    if split[0] in _QUALIFIERS and len(split) > 2 and split[1] in COMPOUND_LEADS:
        verbs.append(split[1])  # admin-delete-user, batch-delete-item, force-delete-cluster: the verb second
    if len(split) > 2 and split[-1] in COMPOUND_LEADS and not {"to", "can", "may", "should"} & set(split):
        verbs.append(split[-1])  # service-instance-delete: a noun phrase, then the verb (not safe-to-destroy)
    acronym = re.search(r"[a-z][A-Z]{2,}$", word)  # WinRM, HostRM: a name ending in an acronym, not a verb
    if len(split) == 2 and (":" in word or "." in word or len(split[0]) >= 3) and not acronym:  # `pg:reset`, `vm.delete`
        verbs.append(split[1])
    return verbs


def _powershell(program: str, args: tuple[str, ...] = ()) -> VerbFinding | None:
    """A PowerShell cmdlet whose verb deletes, stops or disables (`Clear-Disk`, `Stop-Computer`)."""
    verb, dash, noun = program.partition("-")
    if not dash or not verb[:1].isupper():
        return None
    effect = POWERSHELL_VERBS.get(verb.lower())
    if verb.lower() == "remove" and noun.lower().endswith("rule") and not _GUARDS.search(" ".join(args)):
        return None  # Remove-NetFirewallRule 'RDP temp': an opening closed (one named Block-SMB is weakening)
    if effect is None or noun.lower() in POWERSHELL_SAFE_NOUNS or any(parts(noun)[-1:] == [e] for e in ACCESS_ENTRIES):
        return None  # Revoke-SmbShareAccess, Remove-MailboxPermission: access taken away
    if SECURITY_NOUNS.intersection(parts(noun)):
        effect = "weakens_security"
    return VerbFinding(effect, program)


def _classify(verb: str, context: Collection[str]) -> str | None:
    if verb == "pause" and _CHANGES.intersection(context) or verb == "unset" and _NO_FLAGS.intersection(context):
        return None
    if verb in TAKES_DOWN and _MAINTENANCE.intersection(context):
        return None  # `wp maintenance-mode deactivate`: back in service
    if verb in DESTROYS or verb in TAKES_DOWN:
        if SECURITY_NOUNS.intersection(context):
            return "weakens_security"
        return "destroys_data" if verb in DESTROYS else "takes_down"
    return None
