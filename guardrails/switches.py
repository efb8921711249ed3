"""Security switches turned off, in whatever tool's syntax.

Each blind set weakened security in a new dialect: `BlockPublicAcls=false`, `"mtls":{"mode":"DISABLE"}`,
`StrictHostKeyChecking no`, `-DisableRealtimeMonitoring $true`, `/v EnableLUA ... /d 0`,
`sc config WinDefend start= disabled`, `Set-ExecutionPolicy Unrestricted`. What they share: a setting
named for a protection (security, TLS, verification, enforcement, audit, a firewall, an antivirus)
given a value that switches it off, or a setting named for switching a protection off
(`DisableRealtimeMonitoring`, `insecure-skip-tls-verify`) given a value that switches it on. Reading, listing and printing
commands are left alone: `grep PermitRootLogin sshd_config` shows, it does not set.
"""

from __future__ import annotations

import re

from guardrails.invocation import Invocation

# Names of settings that protect something.
_PROTECTS = re.compile(
    r"secur|protect(?:ion|ed)|mtls|(?<![a-z])tls|(?<![a-z])ssl(?!compression)|verif|strict|enforc|defend|firewall|antivirus|realtime|real-time"
    r"|quarantin|signature|signing|audit|encrypt|authenticat|authoriz|(?<![a-z])auth(?![a-z])|(?<![a-z])lua"
    r"|enablelua|(?<![a-z])uac|selinux|apparmor|seccomp|gatekeeper|spctl|blockpublic|publicaccessblock|permitroot"
    r"|hostkey|certcheck|checkcert|csrf|(?<![a-z])mfa|executionpolicy|deny(?!list)|protected-mode|protectedmode"
    r"|versioning|lmcompatibility|requiresignature|root_squash|oslogin|backup|globalstate|nodelete|nosizechange"
    r"|destructive_requires_name|loopback_users|https|(?<![a-z])waf|require|injection|row.level.security|dnssec"
    r"|stonith|fencing|threshold_enabled|pointintimerecovery|point_in_time_recovery|(?<![a-z])pitr|scanning"
    r"|prevention|complexity|preauth|gpgcheck|inject(?!ion)|access[-_]?log|sslverify|ssl[-_]?mode|certificatecheck|strongpassword|soft[-_]?delete"
    r"|failureaction|oauth|xsrf|appendonly|(?<![a-z])crl(?![a-z])|revocation|ocsp|disallow|automatic(?:ally)?[-_]?install|auto[-_]?update|automaticupdate|network[-_]?polic|strong[-_]?crypto|(?<![a-z])log[-_]?level|(?<![a-z])logging"
    r"|secruleengine|modsecurity|anti[-_]?flood|authreject|brute[-_]?force|cphulk|fail2ban|rate[-_]?limit"
    r"|forcelogin|password[-_]?policy|checkaddress|handlerssl|syncookies|kerberos"
    r"|(?<![a-z])acl(?![a-z])|hostssl|disable[-_]functions|open[-_]basedir"
    # durability: writes acknowledged before they are on disk, or the WAL no longer archived
    r"|delete[-_]?retention|fsync|full[-_]?page[-_]?writes|synchronous[-_]?commit|doublewrite|archive[-_]?mode|(?<![\w-])sync(?![\w-])",
    re.IGNORECASE)
# Names of settings that open something to anyone when switched on (`--public-network-access Enabled`,
# `users.anonymous.enabled: true`), or of features that are insecure by design (`testsigning on`, SMB1 = 1).
_OPENS = re.compile(r"public[-_]?(?:network[-_]?)?access|publicly[-_]?accessible|allow[-_]?public|anonymous"
                    r"|allow\.everyone|uselogoncredential|allowunencrypted|passwordneverexpires|trustedfordelegation"
                    r"|(?<![a-z])ssl3|(?<![a-z.])tls1(?![\d.])|tls1[01]"
                    r"|(?<![a-z])guest|allow[-_]?guest|testsigning|nointegritychecks|smb1|sslv[23]|remotelogin"
                    r"|allow[-_]?(?:root|empty[-_]?password|remote)|insecure[-_]?registr|permit[-_]?root"
                    r"|password[-_]?not[-_]?required|serial[-_]?port|allowed[-_]?all|autoadminlogon"
                    r"|passwordauthentication|permitemptypasswords|challengeresponseauthentication"
                    r"|kbdinteractiveauthentication|allow[-_]?privilege|allow[-_]?pool[-_]?delete|allow[-_]?force[-_]?push"
                    r"|remote_os_authent|app_debug|(?<![a-z])debug[-_]?mode|disable[-_]?authentication|allow[-_ ]setuid"
                    r"|mount[-_ ]hostfs|enable[-_]?public[-_]?network|auto[-_]?forward"
                    r"|(?<![a-z])privileged(?![a-z])|local[-_]?accounts|non[-_]?ssl[-_]?port"
                    r"|debug[-_]?display|display[-_]?errors", re.IGNORECASE)  # (switched off, these harden)
# Names of settings that say who may do what, and values that mean anyone or everything.
_AUDIENCE = re.compile(r"visibility|privacy|default[-_]?action|default[-_]?(?:repository[-_]?)?permission|trustedhosts"
                       r"|inbound[-_]?policy|policy\.default"
                       r"|allowed[-_]?actions|principal|grantee|mynetworks|trusted[-_]?networks|allowed[-_]?origins"
                       r"|authorized[-_]?networks?|source[-_]?ranges?|allowed[-_]?(?:ips|hosts|cidrs)", re.IGNORECASE)
_ANYONE = frozenset({"public", "everyone", "anyone", "anonymous", "allusers", "allauthenticatedusers", "all", "*",
                     "allow", "admin", "user:*", "user:anonymous", "0.0.0.0/0", "::/0", "all-unauthenticated",
                     "role:admin"})
# Names of settings that switch a protection off when set.
_LOOSENS = re.compile(r"(?:^|[-_./])(?:disable|insecure|skip[-_]?(?:verify|tls|ssl|cert|acl|auth\w*|permission)|no[-_]?verify|doesnotrequire"
                      r"|enable[-_]legacy|permissive|circular[-_]?logging"
                      r"|allow[-_]?(?:insecure|unsafe|all)|trust[-_]?all|ignore[-_]?(?:cert|ssl|tls))"
                      r"|[a-z]disabled$", re.IGNORECASE)  # AuditDisabled
OFF = frozenset({"false", "0", "off", "no", "disabled", "disable", "never", "none", "permissive", "unrestricted",
                 "bypass", "privileged", "$false", "allowall", "allow-all", "suspended", "detection", "detectiononly",
                 "trust", "old", "legacy", "allow_unencrypted_and_encrypted", "unencrypted", "alwaysallow",
                 "allowallauthenticator", "allowallauthorizer", "all-unauthenticated", "dryrun", "audit", "rejected"})
ON = frozenset({"true", "1", "yes", "on", "enabled", "enable", "$true"})
_ADMIN_ROLES = frozenset({"superuser", "admin", "administrator", "cluster-admin", "root", "owner"})
_ANONYMOUS = re.compile(r"(?i)anonymous|unauthenticated|everyone")  # ... given to whoever does not log in
# Programs that read or print: the words they are given are shown, not set (a redirect to a file is a write).
_SHOWS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "cat", "less", "more", "head", "tail", "awk", "sed", "jq",
                    "yq", "man", "which", "type", "stat", "ls", "find", "diff", "wc", "sort", "uniq", "cut", "tr",
                    "column", "getenforce", "sestatus", "select-object", "where-object", "format-table",
                    "get-mpcomputerstatus", "get-netfirewallprofile", "journalctl"})
_PRINTS = frozenset({"echo", "printf"})
_MANIFEST_READERS = frozenset({"kubectl", "oc", "kustomize"})  # what they are fed on stdin is applied
_READS = frozenset({"get", "list", "ls", "describe", "show", "status", "info", "inspect", "view", "logs", "query",
                    "qe", "check", "test", "verify", "audit", "-t", "-l", "--list", "--get", "--show"})
_MIN_TLS_OLD = re.compile(r"(?i)min(?:imum)?[-_]?tls[-_]?version[\"']?[=: ]+[\"']?(?:tls)?[-_ ]?1(?:[._]?[01])?(?![\d.])")
_REMOVAL = re.compile(r"^--?(?:remove|delete|unset|del|rm)[-_]?\w*=", re.IGNORECASE)
_WINDOW = 48  # characters before a value where its setting's name is read
_VALUE = re.compile(r"[\w$*](?:[\w$*:/.-]*[\w$*])?")  # a word, or 0.0.0.0/0, User:*; not the ':' before it


def switched_off(inv: Invocation) -> str | None:
    """The setting a command switches off (`BlockPublicAcls=false`, `mtls mode DISABLE`), or None."""
    program = inv.program.lower()
    if program in ("sed", "gsed", "perl") and any(a.startswith("-i") or a.startswith("-pi") for a in inv.args):
        return _config_edit(inv)
    if program == "yq" and any(a in ("-i", "--inplace") for a in inv.args):  # yq -i '.x.enabled = false' FILE
        return _text_switched_off(" ".join(a for a in inv.args if not a.startswith("-") and "=" in a))
    if program == "tee" and inv.stdin_from == "literal" and inv.stdin:  # echo 'x.security.disabled: true' | tee -a conf
        if _GENERIC_OFF.search(inv.stdin) and _protection_file(inv.args):
            return _protection_file(inv.args)
        return _text_switched_off(inv.stdin)
    if program in _MANIFEST_READERS and inv.stdin_from == "literal" and inv.stdin and not _reads(inv):
        return _text_switched_off(inv.stdin)  # kubectl apply -f - <<EOF (a PeerAuthentication, mtls mode DISABLE)
    if program in _PRINTS and inv.redirects:  # echo '  stats socket ipv4@0.0.0.0:9999 level admin' >> haproxy.cfg
        opened = _OPEN_TO_ALL.search(" ".join(inv.args))
        if opened:
            return opened.group()
    if program in _SHOWS or (program in _PRINTS and not inv.redirects):
        return None
    words = [inv.program, *inv.args]
    if inv.program != "conf" and _reads(inv):  # ("conf": a configuration text, not a command)
        return None
    registry = _registry_value(inv)
    if registry is not None:
        return registry
    default = _DEFAULT_PASSWORD.search(" ".join(words))
    if default:
        return default.group()  # racadm set iDRAC.Users.2.Password calvin: the first password anyone tries
    old_tls = _MIN_TLS_OLD.search(" ".join(words))
    if old_tls:
        return old_tls.group()  # --min-tls-version 1.0: TLS 1.0 and 1.1 accepted again
    bodies = [a for a in inv.args if "{" in a] if program in _CRYPTO_CLIENTS else words  # (a client's own --ciphers)
    legacy = _LEGACY_CRYPTO.search(" ".join(bodies))
    if legacy:
        return legacy.group()
    # what a removal option names is taken away, not set (grubby --remove-args=selinux=0 turns SELinux back on)
    text = " ".join(w for w in words if not _REMOVAL.match(w))
    for match in _VALUE.finditer(text):
        value = match.group().strip("'\"").lower()
        before = text[max(0, match.start() - _WINDOW):match.start()]
        name = _setting(before)
        if not name:
            continue
        if name.split()[-1].lstrip("-").lower() in ("mode", "level") and not _PROTECTS.search(name):
            name = _named_by_subcommand(inv, name)
        if _NEGATED_OPENING.search(name):
            if value in OFF:
                return _last_name(name)  # NoAnonymous no, disable_plaintext_auth = no
            continue  # NoAnonymous yes: the opening stays shut
        snake = _snake(name)
        protects = _PROTECTS.search(name) or _PROTECTS.search(snake)  # (skipACL: skip_ACL)
        loosens = _LOOSENS.search(name) or _LOOSENS.search(snake)  # (tlsAllowInsecureConnection)
        if (value in OFF or (value == "inactive" and "protection" in name.lower())) and protects and not loosens \
                and not _OPENS.search(name):
            return _last_name(name)  # (Cognito's --deletion-protection INACTIVE; not `influx auth inactive`)
        if value in ON and loosens and protects:
            return _last_name(name)  # -DisableRealtimeMonitoring $true, skipACL=yes; not scale-down-disabled=true
        if value in ON and _OPENS.search(name) and not _LOOSENS.search(name):
            return _last_name(name)  # --public-network-access Enabled, users.anonymous.enabled true
        if value in _ADMIN_ROLES and _ANONYMOUS.search(name):
            return _last_name(name)  # xpack.security.authc.anonymous.roles: superuser
        if value in _ANYONE and _AUDIENCE.search(_last_name(name)):
            return _last_name(name)  # --visibility public, default_repository_permission=admin
    return _loosening_flag(inv)


def _named_by_subcommand(inv: Invocation, name: str) -> str:
    """A generic option's name (--mode, --level) read as the protection the subcommand names, when it names one
    (`az network front-door waf-policy update ... --mode Detection`)."""
    subject = next((w for w in [a for a in inv.args if not a.startswith("-")][:4] if _PROTECTS.search(w)), None)
    return f"{subject} {name}" if subject else name


def _snake(name: str) -> str:
    """A camelCase name with its words split (`tlsAllowInsecureConnection` -> `tls_Allow_Insecure_Connection`)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)


def _text_switched_off(text: str) -> str | None:
    """What a configuration text written to a file or applied opens to all or switches off."""
    opened = _OPEN_TO_ALL.search(text)
    if opened:
        return opened.group()
    keyed = "\n".join(_joined_key(line.strip()) for line in text.split("\n"))  # `guest ok = yes` is guest_ok=yes
    return switched_off(Invocation(program="conf", args=tuple(keyed.split())))


# A password set to a vendor's default or a word every scanner tries: `...Password calvin`, `passwd admin public`,
# `password irreversible-cipher Huawei@123`, `-s Welcome1` (ldappasswd), `PASSWORD(WELCOME1)`, `-p changeme123`.
_DEFAULT_PASSWORD = re.compile(
    r"(?i)(?:password|passwd|--password|--new-password|-NewPassword|^ldappasswd\s.*\s-s|useradd\s.*\s-p)"
    r"(?:\s+(?:irreversible-)?cipher|\s+simple)?"
    r"(?:\s+[\w.-]+(?=\s+\S))?[\s=:(]+[\"']?(calvin|public|changeme\w*|password\d*|welcome\d*|huawei@123|admin@123"
    r"|p@ssw0rd|passw0rd|toor|123456\d*|letmein|cisco|ubnt|raspberry|abc123|qwerty)[\"')]?(?:\s|$)")


# An in-place edit of a configuration file: `sed -i 's/OLD/NEW/' FILE` or `sed -i '/PATTERN/d' FILE`.
_SUBSTITUTION = re.compile(r"^s(.)(.*?)(?<!\\)\1(.*?)(?<!\\)\1[gIi0-9]*$", re.DOTALL)
_DELETION = re.compile(r"^[/\\](.+)/\s*d$")
# A shared secret or password set to nothing or to a value every scanner tries (RADIUS's testing123).
_WEAK_SECRET = re.compile(r"(?i)(?:^|\s|[\w.]_)(?:secret|password|passwd|psk|passphrase|requirepass|masterauth)\s*[=:]?\s*"
                          r"(?:\"\"|''|(?:[\"']?(?:testing123|changeme|change_me|password1?|admin|secret|123456|default)[\"']?))\s*;?\s*$"
                          # a user:password pair of the same guessable kind (HAProxy's `stats auth admin:admin`)
                          r"|(?:^|\s)auth\s+\w+:(?:admin|password|changeme|secret|123456|default)\s*$")
_SPACED_KEY = re.compile(r"^(\^?\s*[A-Za-z][\w]*(?: [A-Za-z][\w]*)+)(\s*=)")  # a key of words (Singularity, Samba)


def _joined_key(text: str) -> str:
    """A key of several words joined into one name: `allow setuid = yes` is allow_setuid = yes."""
    return _SPACED_KEY.sub(lambda m: m.group(1).replace(" ", "_") + m.group(2), text)


# <useSecurity>false</useSecurity> is useSecurity=false (its opening tag may come masked as a placeholder: _useSecurity_)
_XML = re.compile(r"(?:<([\w.-]+)>|_([\w.-]+)_)([^<]*)</([\w.-]+)>")
_OPEN_TO_ALL = re.compile(r"0\.0\.0\.0/0|::/0|\ballow\s+all\b|\bALL\s*=\s*\(ALL\)\s*NOPASSWD"
                          r"|\bpass\s+in\b.*\bfrom\s+any\s+to\s+any\b"
                          r"|allow-(?:transfer|query|recursion|update)\s*\{\s*any|^\s*bind\s+0\.0\.0\.0\b"
                          r"|bind[-_]?address\s*=\s*0\.0\.0\.0|\blisten_addresses\s*=\s*'?\*|\bRequire\s+all\s+granted\b"
                          # a service told to listen on every address (`bindIp: 0.0.0.0`, `<listen_host>0.0.0.0`)
                          r"|(?:bind[-_]?ip|listen[-_]?host|listen[-_]?address|rpc[-_]?address|bind[-_]?host"
                          r"|listen[-_]?interface)[\"'>_]?\s*[:=]?\s*[\"']?(?:0\.0\.0\.0|::)(?![\d/])"
                          r"|\bpam_permit\.so"  # every password accepted
                          r"|(?m:^\s*\+\s+\+\s*$)"  # `+ +` in .rhosts or hosts.equiv: every host, every user
                          r"|(?:@|tcp://|\b(?:admin|listen|bind|address|addr)\s+)(?:0\.0\.0\.0|\[::\]):\d+"  # stats socket ipv4@0.0.0.0:9999, -H tcp://0.0.0.0:2375
                          r"|\b(?:auth\w*|security|tls|ssl)\s*[=:]\s*[\w/]*\bnone\b"  # AuthType=auth/none
                          r"|\bOptions\b[^\n]*?(?<![-\w])\+?Indexes\b"  # Apache: every directory listed
                          # any password accepted: JupyterHub's dummy authenticator, Dovecot's nopassword passdb
                          r"|authenticator_class\s*=\s*['\"]?(?:dummy|null)\b|\bnopassword\s*=\s*(?:y|yes|1|true)\b"
                          r"|\blistener\s+\d+\s+0\.0\.0\.0\b"  # Mosquitto: a listener on every address
                          # Firebase rules that let anyone read or write
                          r"|\ballow\s+(?:read|write|create|update|delete)(?:\s*,\s*\w+)*\s*:\s*if\s+true\b"
                          r"|[\"']\.(?:read|write)[\"']\s*:\s*[\"']?true\b"
                          # FreeRADIUS accepting every login, a container policy accepting any image, Mosquitto's
                          # ACL letting every client write every topic
                          r"|\bAuth-Type\s*:=\s*Accept\b|\binsecureAcceptAnything\b|(?m:^\s*pattern\s+(?:readwrite|write)\s+#\s*$)"
                          # every address: `PublishPort=0.0.0.0:6379:6379`, `management 0.0.0.0 7505`, `-l 0.0.0.0`,
                          # `server.host: "0.0.0.0"`
                          r"|=\s*0\.0\.0\.0:\d+|(?m:^\s*(?:[a-z][\w-]*|-l)\s+0\.0\.0\.0(?:\s+\d+)?\s*$)"
                          r"|(?:server[._-]?host|http[_-]?addr)[\"']?\s*[:=]\s*[\"']?0\.0\.0\.0\b",
                          re.IGNORECASE)
# A protection's file given a generic switch set off (`enabled = false;` into dkim_signing.conf or antivirus.conf).
_GENERIC_OFF = re.compile(r"(?im)^\s*(?:enabled?|active|on)\s*[=:]\s*[\"']?(?:false|no|off|0|disabled?)\b")
# A requirement relaxed: `ssl = required` -> `ssl = yes`, `sslmode=verify-full` -> `sslmode=prefer`.
_REQUIRED = re.compile(r"(?i)[=:\s][\"']?(?:required|require|mandatory|enforced?|strict|verify-full|verify-ca|always)\b")
_WEAK_TLS = re.compile(r"(?<![-!])\bSSLv[23]\b|(?<![-!])\bTLSv1(?:\.[01])?\b(?!\.[23])|(?<![-!])\bTLSv1_[01]\b|\bSSLProtocol\s+all\b(?!\s+-)",
                       re.IGNORECASE)
# A cipher or protocol setting given a broken one: `ciphers 'DEFAULT:SSLv3:RC4'`, `"ssl-min-proto-ver":"tls1-0"`
# (`-SSLv3`, `!RC4` exclude them; clients and scanners only try them).
_LEGACY_CRYPTO = re.compile(r"(?i)(?:cipher\w*|(?<![\w-])protocols?|ssl[-_]?protocol|proto[-_]?ver\w*|ssl[-_]?min[-\w]*"
                            r"|min[-_]?proto\w*)[\"']?\s*[:= ]\s*[\"']?[^\"';\s]*?(?<![-!+\w])"
                            r"(SSLv[23]|RC4|tls1[-_.]?0|TLSv1(?![.\d_])|TLSv1_0|NT1|LANMAN[12]?|SMB1)(?![\w.])")
_CRYPTO_CLIENTS = frozenset({"openssl", "nmap", "sslscan", "testssl", "testssl.sh", "sslyze", "curl", "wget", "gnutls-cli"})
# A protection named as negated (NoAnonymous, disable_plaintext_auth, deny_guest) switched off: the opening is on.
_NEGATED_OPENING = re.compile(r"(?i)(?:^|[^a-z])(?:no|disable|deny|forbid|prohibit)[-_]?(?:anonymous|anon|plaintext|cleartext"
                              r"|guest|root[-_]?login|insecure|unencrypted)\w*\W*$")


def _config_edit(inv: Invocation) -> str | None:
    """A protection an in-place edit switches off: the new text switches it off, drops the protection the
    old text named (`s/SASL_SSL/PLAINTEXT/`, `s/deny all/allow all/`) or opens it to all; a deleted line
    that named a protection (`/auth_basic/d`)."""
    for arg in inv.args:
        script = arg[2:] if arg.startswith("-e") and len(arg) > 2 else arg
        whole = _SUBSTITUTION.match(script.strip()) or _DELETION.match(script.strip())  # one s/// or /X/d whose text
        for part in [script] if whole else re.split(r"[;\n]", script):  # may hold ';' (`s/deny all;/allow all;/`)
            part = _ADDRESS.sub("", part.strip())  # (`/^\[http\]/,/^\[/ s/a/b/`: the lines it applies to)
            sub = _SUBSTITUTION.match(part)
            if sub:
                kept = re.search(r"\\\((.*?)\\\)", sub.group(2))  # s/^\(server min protocol\).*/\1 = NT1/
                replacement = sub.group(3).replace("\\1", kept.group(1)) if kept else sub.group(3)
                old, new = (_joined_key(_XML.sub(lambda m: f"{m.group(4)}={m.group(3)}",
                                                 g.replace("\\s*", " ").replace("\\", "")))
                            for g in (sub.group(2), replacement))  # `allow setuid = yes` is allow_setuid=yes
                off = switched_off(Invocation(program="conf", args=tuple(new.split())))
                if off and not switched_off(Invocation(program="conf", args=tuple(old.split()))):
                    return off
                if new.lstrip().startswith("#") and not old.lstrip().startswith("#") and _PROTECTS.search(old):
                    return _PROTECTS.search(old).group()  # s/^auth_basic/# auth_basic/: commented out
                weak = _WEAK_TLS.search(new)
                if weak and not _WEAK_TLS.search(old):
                    return weak.group()  # ssl_protocols TLSv1 TLSv1.1 ...
                if _GENERIC_OFF.search(new) and not _GENERIC_OFF.search(old) and _protection_file(inv.args):
                    return _protection_file(inv.args)  # s/enabled = true/enabled = false/ in antivirus.conf
                secret = _WEAK_SECRET.search(new)
                if secret and not _WEAK_SECRET.search(old):
                    return secret.group()  # secret = testing123, Password = "": anyone who guesses gets in
                required = _REQUIRED.search(old)
                if required and not _REQUIRED.search(new) and _PROTECTS.search(old.split("=")[0].split(":")[0]):
                    return old.strip("^ ")  # s/^ssl = required/ssl = yes/: a requirement relaxed
                named = _PROTECTS.search(old)  # (removing `apparmor=0` switches AppArmor back on)
                if named and not _PROTECTS.search(new) and not switched_off(Invocation(program="conf", args=tuple(old.split()))):
                    return named.group()
                if _OPEN_TO_ALL.search(new) and not _OPEN_TO_ALL.search(old):
                    return _OPEN_TO_ALL.search(new).group()
                emptied = _EMPTIED.match(new)
                if emptied and _PROTECTS.search(emptied.group(1)) and not _EMPTIED.match(old):
                    return emptied.group(1)  # ssl.endpoint.identification.algorithm= , disable_functions =
                if _protection_file(inv.args, products=True) and _SWITCHED_ON_DISABLED.search(new) \
                        and not _SWITCHED_ON_DISABLED.search(old):
                    return _protection_file(inv.args, products=True)  # "disable_events": "true" in osquery.conf
            deleted = _DELETION.match(part)
            if deleted and _PROTECTS.search(deleted.group(1)):
                return _PROTECTS.search(deleted.group(1)).group()
    return None


def _protection_file(args: tuple[str, ...], *, products: bool = False) -> str | None:
    """The configuration file among the arguments that is named for a protection (`10-ssl.conf`, `antivirus.conf`),
    or with `products` for a security tool (`/var/ossec/etc/ossec.conf`, `osquery.conf`)."""
    for arg in args:
        base = arg.rsplit("/", 1)[-1]
        if "/" in arg and not arg.startswith("-") and (
                _PROTECTS.search(base) or (products and _SECURITY_PRODUCTS.search(arg))):
            return base
    return None


# sed's line addresses before a command: `/^\[http\]/,/^\[/`, `10,20`, `$`
_ADDRESS = re.compile(r"^(?:/(?:[^/\\]|\\.)*/|\d+|\$)(?:\s*,\s*(?:/(?:[^/\\]|\\.)*/|\d+|\$))?\s*(?=s\W)")
# A protection's setting left with no value: `ssl.endpoint.identification.algorithm=`, `disable_functions =`
_EMPTIED = re.compile(r"^\s*\^?\s*([A-Za-z][\w.\[\]'\"-]*)\s*[=:]\s*(?:\"\"|''|\(\s*'\s*'\s*\))?\s*$")
# Security tools whose own configuration files carry their switches
_SECURITY_PRODUCTS = re.compile(r"(?i)ossec|wazuh|osquery|auditd?|falco|clamav|clamd|aide|fail2ban|crowdsec|suricata"
                                r"|snort|modsecurity|crowdstrike|falcon|sentinelone|defender|csf\.conf|lfd|rkhunter")
# A switch set to disabled in any shape: `"disable_events": "true"`, `<disabled>yes</disabled>`, `disabled = 1`
_SWITCHED_ON_DISABLED = re.compile(r"(?i)(?:^|[\s\"'<_])disabled?(?:[-_]\w+)?[\"'>_]?\s*(?:[=:]\s*)?[\"']?(?:true|yes|1)\b")


def _last_name(setting: str) -> str:
    """The setting's own name, the last word of what was read back (`"mtls":{"mode"` -> mtls)."""
    words = re.findall(r"[A-Za-z][\w.:/-]*", setting)
    named = [w for w in words if _PROTECTS.search(w) or _LOOSENS.search(w)]
    return (named or words or [setting])[-1]


# An environment variable that switches certificate checks off for the command it prefixes (or the shell it is
# exported in): VAULT_SKIP_VERIFY=true, GOVC_INSECURE=1, NODE_TLS_REJECT_UNAUTHORIZED=0, GIT_SSL_NO_VERIFY=1.
_ENV_SETTING = re.compile(r"(?:^|[\s;&|(])(?<!export )([A-Z][A-Z0-9_]*)=[\"']?([\w.-]*)")  # (export X=: its own rule)
_ENV_LOOSENS = re.compile(r"SKIP_(?:TLS_)?VERIFY|INSECURE|NO_VERIFY|SKIP_VERIFICATION|TLS_SKIP|DISABLE_(?:SSL|TLS)")
_ENV_CHECKS = re.compile(r"TLS_REJECT_UNAUTHORIZED|HTTPSVERIFY|SSL_VERIFY$|VERIFY_SSL$|TLS_VERIFY$|SSL_VERIFY_PEER")


def environment_switched_off(text: str) -> str | None:
    """The environment variable a command line sets to switch certificate checks off, or None."""
    for name, value in _ENV_SETTING.findall(text):
        value = value.lower()
        if (_ENV_LOOSENS.search(name) and value in ("1", "true", "yes", "on")) or \
                (_ENV_CHECKS.search(name) and value in ("0", "false", "no", "off")):
            return name
    return None


# A resource's state set to out of service: `--status Disabled`, `--enabled-state Disabled`, `state=stopped`.
_STATE = re.compile(r"(?:^|[-_.])(?:state|status|enabled[-_]?state|desired[-_]?state|admin[-_]?state|power[-_]?state"
                    r"|desired[-_]?status|ensure|start|isoffline)$", re.IGNORECASE)
DOWN = frozenset({"disabled", "stopped", "offline", "down", "suspended", "inactive", "deallocated", "receivedisabled",
                  "senddisabled", "maintenance", "absent", "$true"})


_ENABLED = re.compile(r"(?i)enabled?$")
_FALSE = frozenset({"$false", "false", "no", "0", "off"})
# an account switched off is someone leaving; a firewall rule switched off closes what it allowed
_ACCESS_ONLY = re.compile(r"(?i)accountenabled|firewall.*\brule|\brule.*firewall")


# Maintenance mode entered: the host, node, site or server stops serving (`esxcli system maintenanceMode set
# --enable true`, `consul maint -enable`, `wp maintenance-mode activate`, `acli host.enter_maintenance_mode`,
# `-InMaintenanceMode $true`, `drush state:set system.maintenance_mode 1`); leaving it or asking about it does not.
_MAINT = re.compile(r"(?i)^(?:[\w.:/-]*[-_.:/])?(?:in[-_]?)?maint(?:enance)?(?:[-_]?mode)?(?:\.php)?$")
_MAINT_ENTER = re.compile(r"(?i)enter[-_]?maint")
_MAINT_ON = frozenset({"--enable", "-enable", "enable", "activate", "on", "--on", "true", "$true", "1", "-e", "enter", "start"})
# A state set down in a JSON body: `curl -X PUT .../interface/port5 -d '{"status":"down"}'`.
_BODY_STATE = re.compile(r'(?i)"(?:state|status|admin[-_]?state|desired[-_]?state|power[-_]?state)"\s*:\s*"(?:disabled|stopped'
                         r'|offline|down|suspended|inactive|maintenance|deallocated)"')


def _maintenance_entered(inv: Invocation) -> str | None:
    """The maintenance mode a command switches on, or None (switched_down has ruled out reading and printing)."""
    words = [inv.program, *inv.args]
    for n, word in enumerate(words):
        name, eq, value = word.partition(":") if word.startswith("-") and ":$" in word else word.partition("=")
        if _MAINT_ENTER.search(name):
            return name
        if not _MAINT.match(name.lstrip("-")):
            continue
        following = [value] if eq else [w.lower().strip("'\"") for w in words[n + 1:n + 4]]
        for i, w in enumerate(following[:-1]):
            if w in _MAINT_ON and w.startswith("-") and following[i + 1] in _FALSE:
                following = []  # --enable false: left
        if any(w in _MAINT_ON for w in following) or \
                any(w.lower() in _MAINT_ON for w in words[max(1, n - 2):n] if w.startswith("-")):
            return name.lstrip("-")
    return None


def switched_down(inv: Invocation) -> str | None:
    """The state setting a command turns out of service (`az servicebus queue update --status Disabled`), or None."""
    if inv.program.lower() in _SHOWS or inv.program.lower() in _PRINTS or _reads(inv):
        return None
    entered = _maintenance_entered(inv)
    if entered:
        return entered
    body = next((m for a in inv.args if "{" in a and (m := _BODY_STATE.search(a))), None)
    if body and not _ACCESS_ONLY.search(" ".join(inv.args)):
        return body.group()
    args = list(inv.args)
    for n, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not eq and arg.startswith("-") and ":" in arg:  # PowerShell's -HAEnabled:$false
            name, eq, value = arg.partition(":")
        if not eq or not value:  # --status Disabled, start= disabled (sc.exe)
            name, value = name, (args[n + 1] if n + 1 < len(args) else "")
        if name.startswith("-") and _ENABLED.search(name.lstrip("-")) and value.strip("'\"").lower() in _FALSE \
                and not _OPENS.search(name) and not _LOOSENS.search(name) and not _ACCESS_ONLY.search(" ".join(args)) \
                and not any(_MAINT.match(a.lstrip("-")) for a in args):  # (maintenance mode --enable false: left)
            return name.lstrip("-")  # -Enabled $false, -HAEnabled:$false, -LinkEnabled No: switched off
        if name.lower().endswith("isoffline") and value.lower() != "$true":
            continue
        if name.lower().lstrip("-") == "ensure" and value.lower() not in ("stopped", "absent"):
            continue
        if name.startswith("-") or eq:
            if _STATE.search(name.lstrip("-")) and value.strip("'\"").lower() in DOWN:
                return name.lstrip("-")
    changes = {p for w in args[:3] if not w.startswith("-") for p in re.split(r"[-_]", w.lower())} & _UPDATES
    bare = next((a for a in args if a in ("--disabled", "--no-enabled", "--no-enable")), None)
    if changes and bare and not _ACCESS_ONLY.search(" ".join(args)):
        return bare.lstrip("-")  # aws route53 update-health-check --disabled, globalaccelerator --no-enabled
    return None


_UPDATES = frozenset({"update", "modify", "set", "edit", "change", "configure"})


def _registry_value(inv: Invocation) -> str | None:
    """`reg add KEY /v Name /t TYPE /d Value`: a protection's value set to 0 (EnableLUA, fDenyTSConnections)."""
    if inv.program.lower() not in ("reg", "reg.exe") or "/v" not in inv.args or "/d" not in inv.args:
        return None
    name = inv.args[inv.args.index("/v") + 1] if inv.args.index("/v") + 1 < len(inv.args) else ""
    value = inv.args[inv.args.index("/d") + 1].lower() if inv.args.index("/d") + 1 < len(inv.args) else ""
    if (value in OFF and _PROTECTS.search(name)) or (value in ON and _LOOSENS.search(name)):
        return name
    return None


def _reads(inv: Invocation) -> bool:
    """A command that reads settings (`redis-cli CONFIG GET protected-mode`, `aws s3api get-public-access-block`)."""
    args = inv.args  # (not a word that may be an option's value: `--bucket logs`)
    positionals = [a for n, a in enumerate(args) if not a.startswith("-")
                   and not (n and args[n - 1].startswith("-") and "=" not in args[n - 1])][:3]
    return any(w.lower() in _READS or w.lower().startswith(("get-", "list-", "describe-", "show-"))
               for w in positionals) or inv.program.lower().startswith(("get-", "test-"))


_NAME = re.compile(r"""([A-Za-z][\w.:/\[\]-]*)["']?\]?\s*(?:(?:=>|[=:])\s*[{\[]?\s*["']?(?:mode|value|state|enabled|level)?["']?\s*[=:]?"""
                   r"""|\s+(?:/t\s+\S+\s+)?(?:/d|--value|-value|--set|set|to)?)\s*["']?$""")


_GENERIC = frozenset({"mode", "value", "state", "enabled", "level", "type", "start", "status", "set", "config",
                      "parametervalue", "isenabled", "bool", "int", "integer", "string"})


def _setting(before: str) -> str | None:
    """The name of the setting a value is given to, read back from the text before it: `Key=`,
    `"key": {"mode": `, `Key `, `/v Key /t REG_DWORD /d `, `key --value `. A generic name (mode,
    value, start=) stands for the one before it: `"mtls":{"mode":`, `WinDefend start=`."""
    match = _NAME.search(before)
    if not match:
        return None
    name = match.group(1)
    if name.strip("-").lower() in _GENERIC or match.group().lstrip(name).strip().lower().lstrip("-") in _GENERIC:
        earlier = re.findall(r"[A-Za-z][\w.:/-]*", before[max(0, match.start(1) - 32):match.start(1)])
        # the word before (`WinDefend start=`), or the protection named a few words back (`firewall set --enabled`)
        named = [w for w in earlier[-3:] if _PROTECTS.search(w)]
        return " ".join([*(named[-1:] or earlier[-1:]), name])
    return name


_OPEN_FLAG = re.compile(r"(?i)^--(?:enable-|allow-|make-)?(?:publicly-accessible|public-access|public-network-access"
                        r"|anonymous(?:-access|-auth)?|public-ip-on-launch|public|local-accounts)$")


# a message silenced, not a protection: redis-cli's --no-auth-warning (about -a on the command line)
_NOTICE = re.compile(r"[-_](?:warnings?|notices?|banners?|hints?|messages?)$", re.IGNORECASE)


def _loosening_flag(inv: Invocation) -> str | None:
    """A flag that switches a protection off by its own name (`spctl --master-disable`, `--insecure-skip-tls-verify`)."""
    for n, arg in enumerate(inv.args):
        if not arg.startswith("-"):
            continue
        name = arg.split("=", 1)[0]
        if name.startswith("--no-") and _PROTECTS.search(name[5:]) and not _LOOSENS.search(name[5:]) \
                and not _NOTICE.search(name):
            return name  # --no-deletion-protection, --no-enable-termination-protection, --no-verify-ssl
        if re.match(r"--no-disable-api-(?:termination|stop)$", name):
            return name  # lets the API terminate (or stop) the instance: its protection off
        following = inv.args[n + 1].lower() if n + 1 < len(inv.args) else ""
        if _OPEN_FLAG.match(arg) and following not in OFF:
            return name  # --publicly-accessible, --allow-public-access: switched on by being there
        if _LOOSENS.search(name) and (_PROTECTS.search(name) or _PROTECTS.search(inv.program)):
            following = inv.args[n + 1].lower() if n + 1 < len(inv.args) else ""
            value = arg.split("=", 1)[1].lower() if "=" in arg else following if following in OFF | ON else "true"
            if value not in OFF:
                return name  # -DisableRealtimeMonitoring $true (or no value); not ... $false
    return None


# How long data is kept, cut so short that the system deletes it (`influx bucket update --retention 1h`,
# `bq update --expiration 3600`, `mc ilm rule add --expire-days 1`), or the retention lock cleared.
_KEEPING = re.compile(r"^--?(?:[\w-]*retention[\w-]*|[\w-]*expir(?:ation|e|y)[\w-]*|ttl|default[-_]ttl|max[-_]age"
                      r"|[\w-]*time[-_]to[-_]live"
                      r"|expire[-_]days|days|keep[-_]?days|older[-_]than|vacuum-time|frozen[-_]?time[-_]?period[\w-]*)$",
                      re.IGNORECASE)  # (Splunk's frozenTimePeriodInSecs: when an index's buckets are deleted)
_ISO_DURATION = re.compile(r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
_ISO_SECONDS = (31536000, 2592000, 604800, 86400, 3600, 60, 1)
_CLEARS_KEEPING = re.compile(r"^--?(?:clear|remove|no)[-_](?:retention|object[-_]lock|legal[-_]hold)", re.IGNORECASE)
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h|hr|d|day|days)?$", re.IGNORECASE)
_SECONDS = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400, "day": 86400,
            "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1, "w": 604800, "week": 604800, "weeks": 604800,
            "month": 2592000, "months": 2592000, "y": 31536000, "year": 31536000, "years": 31536000}
_DAY = 86400
_CREDENTIALS = frozenset({"token", "tokens", "login", "presign", "signurl", "sign", "session", "lease", "certificate",
                          "cert", "issue", "key", "keys", "credentials", "auth", "secret-id", "approle"})


# How long (or how many) a setting written as name=value or name = value keeps: `retention.ms=3600000`,
# `binlog_expire_logs_seconds=3600`, `default_time_to_live = 3600`, `backup_keep_time = 3600`,
# `backup_daily_retention=1`, `--retained-backups-count=1`; its unit is read from its name.
_KEPT_NAME = re.compile(r"(?i)(?<![\w.-])([\w.-]*(?:retention|retain\w*|ttl|time[-_]to[-_]live|expire\w*|expiration|lifetime|frozentimeperiod\w*"
                        r"|keep[-_]?time|max[-_]?age|num[-_]logs)[\w.-]*)[\"'\]]{0,2}\s*[=:]\s*[\"']?(\d+(?:\.\d+)?)\s*([a-z]*)\b")
_UNIT_IN_NAME = (("ms", 0.001), ("millis", 0.001), ("seconds", 1), ("secs", 1), ("sec", 1), ("minutes", 60),
                 ("mins", 60), ("hours", 3600), ("days", 86400), ("day", 86400))
_COUNTED = re.compile(r"(?i)count|cycles|versions|copies|backups|daily|weekly|number|num[-_]logs")


# An object store's lifecycle rule that expires what it covers within a day: S3's `"Expiration":{"Days":1}`,
# GCS's `{"action":{"type":"Delete"},"condition":{"age":1}}` (a rule scoped to a prefix such as tmp/ is cleanup).
_EXPIRES_IN_DAYS = re.compile(r'(?i)"(?:Noncurrent(?:Version)?)?Expiration"\s*:\s*\{[^}]*?"(?:Noncurrent)?Days"\s*:\s*([01])\b'
                              r'|"type"\s*:\s*"Delete"\s*\}\s*,\s*"condition"\s*:\s*\{\s*"age"\s*:\s*([01])\b')
_PREFIXED = re.compile(r'(?i)"(?:Prefix|matchesPrefix)"\s*:\s*\[?\s*"[^"]+"')


def _kept_setting(inv: Invocation) -> str | None:
    texts = [a for a in inv.args if "=" in a or ":" in a or " " in a]
    texts += [inv.stdin] if inv.stdin_from == "literal" and inv.stdin else []
    for text in texts:
        expiring = _EXPIRES_IN_DAYS.search(text)
        if expiring and not _PREFIXED.search(text):
            return expiring.group()
        for found in _KEPT_NAME.finditer(text):
            if found.start() and text[found.start() - 1] in "?&":
                continue  # a signed URL's own expiry (?X-Goog-Expires=21600)
            name, number, unit = found.group(1), float(found.group(2)), found.group(3).lower()
            if re.search(r"(?i)token|session|cache|lock|url|sign|password|cert|dns|record|ttl_seconds_after|health|lease",
                         name) or (name.lower().endswith("ttl") and "message" not in name.lower() and "default" not in name.lower()):
                continue  # a token's, a cache entry's or a DNS record's lifetime, not the data's
            if _COUNTED.search(name) and not unit:
                if number <= 1 and re.search(r"(?i)retain|retention|num[-_]logs", name):
                    return found.group()  # keep one backup
                continue
            if unit in _SECONDS:
                seconds = number * _SECONDS[unit]
            elif unit:
                continue  # a unit not known here (journald's 1month): not read as seconds
            else:
                low = name.lower()
                seconds = number * next((f for suffix, f in _UNIT_IN_NAME if low.endswith(suffix)), 1)
            if 0 < seconds <= _DAY:
                return found.group()
    return None


# Copies of the data cut to one (or none): `num_replicas = 1`, `"number_of_replicas": 0`, `--bucket-replica 0`,
# `min.insync.replicas=1`, `hdfs dfs -setrep 1`, `--replication-factor 1`.
_COPIES = re.compile(r"(?i)(?<![\w-])-{0,2}((?:num(?:ber)?[-_]of[-_]|num[-_]|default[-_]|min\.insync\.|bucket[-_])?replicas?(?:[-_]count)?"
                     r"|replication[-_]?factor|setrep)[\"']?\s*[=: ]\s*(?:-w\s+|-R\s+)*[\"']?([01])(?![\d.])")


def copies_cut(inv: Invocation) -> str | None:
    """The setting that leaves the data with a single copy (or none), or None."""
    if inv.program.lower() in _SHOWS or _reads(inv):
        return None
    found = _COPIES.search(" ".join(a for a in inv.args))
    if not found:
        return None
    if found.group(1).lower() in ("replicas", "replica") and not re.search(r"(?i)num|number|default|bucket", found.group(1)):
        return None  # --replicas 0 scales a workload: state_switched_down and the scale rules judge it
    return found.group()


def retention_cut(inv: Invocation) -> str | None:
    """The setting that makes the system delete data within a day (or lifts its retention lock), or None."""
    vacuum = inv.program.lower() == "journalctl" and any(a.startswith("--vacuum-time") for a in inv.args)
    if inv.program.lower() in ("sed", "gsed") and any(a.startswith("-i") for a in inv.args):
        edits = [m.group(3) for a in inv.args if (m := _SUBSTITUTION.match(a.strip()))]  # the new text, written
        return _kept_setting(Invocation(program="conf", args=tuple(edits))) if edits else None
    if (inv.program.lower() in _SHOWS and not vacuum) or _reads(inv) or _CREDENTIALS & {a.lower() for a in inv.args}:
        return None  # a token's, a signed URL's or a certificate's lifetime, not the data's
    kept = _kept_setting(inv)
    if kept:
        return kept
    args = inv.args
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if _CLEARS_KEEPING.match(name):
            return name
        if not _KEEPING.match(name) or re.search(r"(?i)expires[-_]?in|token|url|sign", name) \
                or (inv.program.lower() == "rclone" and name in ("--max-age", "--min-age")):  # (rclone's: filters)
            continue  # (a presigned URL's or a token's lifetime, not the data's)
        value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        iso = _ISO_DURATION.match(value.strip("'\"").upper())
        if iso and any(iso.groups()):  # Azure's PT1M, P0W: ISO 8601
            seconds = sum(float(n or 0) * f for n, f in zip(iso.groups(), _ISO_SECONDS))
            if 0 < seconds <= _DAY or (seconds == 0 and "retention" in name.lower()):
                return f"{name} {value}"
            continue
        found = _DURATION.match(value.strip("'\""))
        if not found:
            continue
        unit = (found.group(2) or "").lower()
        default = 86400 if "day" in name.lower() else 1  # --expire-days 1; --expiration 3600 (seconds)
        seconds = float(found.group(1)) * (_SECONDS[unit] if unit else default)
        if 0 < seconds <= _DAY or (seconds == 0 and re.search(r"(?i)day|older", name)):
            return f"{name} {value}"
    return None
