"""Words on-call engineers abbreviate, and what runbooks call them.

People type "sts stuck at 2/3", "pvc at 92%", "prom can't send alerts", "rx errors on bond0";
runbooks (and alert names) say StatefulSet, PersistentVolumeClaim, Prometheus, receive errors on a
network interface. `expand` writes the runbook's words next to the abbreviation, so both legs of
the search see them. The list is generic operations vocabulary (Kubernetes, Linux, networking,
databases, HTTP), not any one team's runbooks."""

from __future__ import annotations

import re

ABBREVIATIONS: dict[str, str] = {
    # Kubernetes objects and components
    "k8s": "Kubernetes", "kube": "Kubernetes",
    "pvc": "PersistentVolumeClaim persistent volume claim", "pvcs": "PersistentVolumeClaim persistent volume claims",
    "pv": "PersistentVolume persistent volume", "pvs": "PersistentVolume persistent volumes",
    "sts": "StatefulSet", "statefulsets": "StatefulSet", "ds": "DaemonSet", "daemonsets": "DaemonSet",
    "rs": "ReplicaSet", "replicasets": "ReplicaSet", "deploy": "deployment", "deploys": "deployments",
    "hpa": "HorizontalPodAutoscaler autoscaler", "hpas": "HorizontalPodAutoscaler autoscalers",
    "vpa": "VerticalPodAutoscaler autoscaler", "ns": "namespace", "svc": "service", "svcs": "services",
    "cm": "ConfigMap", "configmaps": "ConfigMap", "crd": "CustomResourceDefinition", "crds": "CustomResourceDefinitions",
    "cj": "CronJob", "cronjobs": "CronJob", "netpol": "NetworkPolicy", "sa": "ServiceAccount",
    "ksm": "kube-state-metrics", "kcm": "kube-controller-manager", "apiserver": "API server kube-apiserver",
    "api-server": "API server kube-apiserver", "kubelets": "kubelet", "crashloop": "CrashLoopBackOff crash looping",
    "crashlooping": "CrashLoopBackOff crash looping", "oom": "out of memory",
    "oomkilled": "out of memory", "oom-killed": "out of memory",
    # Monitoring
    "prom": "Prometheus", "am": "Alertmanager", "alertmanagers": "Alertmanager", "promql": "PromQL query",
    # Linux, storage, network
    "fs": "filesystem", "filesystems": "filesystem", "fd": "file descriptor", "fds": "file descriptors",
    "mem": "memory", "cpus": "CPU", "rx": "receive", "tx": "transmit", "nic": "network interface",
    "nics": "network interfaces", "iface": "network interface", "ntp": "NTP clock time synchronisation",
    "lb": "load balancer", "lbs": "load balancers", "vm": "virtual machine host", "vms": "virtual machines hosts",
    "certs": "certificates", "cert": "certificate", "tls": "TLS certificate",
    # Databases
    "pg": "Postgres PostgreSQL", "db": "database",
    "dbs": "databases", "repl": "replication",
    # Everyday shortenings
    "repo": "repository", "repos": "repositories", "env": "environment", "prod": "production",
    "config": "configuration", "configs": "configuration", "auth": "authentication", "perms": "permissions",
    "dir": "directory", "dirs": "directories", "ctr": "container", "img": "image", "imgs": "images",
    # HTTP statuses people quote
    "429": "rate limit too many requests", "429s": "rate limit too many requests",
    "502": "bad gateway", "502s": "bad gateway", "503": "service unavailable", "503s": "service unavailable",
    "504": "gateway timeout", "504s": "gateway timeout", "5xx": "server errors", "5xxs": "server errors",
    "401": "unauthorized authentication", "403": "forbidden permission denied",
}
# What people say a thing does, in the words runbooks (and alert names) use for it.
SYMPTOMS: dict[str, str] = {
    "flipping": "flapping", "flips": "flapping", "bouncing": "flapping", "toggling": "flapping",
    "flappy": "flapping", "flaky": "flapping",
    "hangs": "stuck hanging", "hung": "stuck hanging", "frozen": "stuck",
    "differ": "inconsistent mismatch", "differs": "inconsistent mismatch", "different": "inconsistent mismatch",
    "mismatched": "mismatch", "out-of-sync": "inconsistent mismatch",
    "heartbeat": "Watchdog dead man's switch", "deadman": "Watchdog dead man's switch",
    "deadmanssnitch": "Watchdog dead man's switch", "dead-man": "Watchdog dead man's switch",
    "inode": "inodes files", "throttled": "throttling", "evicted": "eviction",
    # Kubernetes' reasons for a container in the Waiting state, as pod listings and events show them
    "containercreating": "container waiting", "imagepullbackoff": "container waiting image pull",
    "errimagepull": "container waiting image pull", "createcontainerconfigerror": "container waiting config",
    "createcontainererror": "container waiting", "invalidimagename": "container waiting image",
}
# What people ask to have done, in the words procedure runbooks are named by: a question says "make
# sidekiq stop processing that queue", "clean them up", "we need another pgbouncer vm"; the runbooks
# are disabling-a-queue, remove-broken-runners, pgbouncer-add-instance. Phrases, not single words:
# "stop" alone is as often a symptom ("alerts stopped") as a request.
_W = r"(?:[\w.-]+\s+)"  # one word in between: "stop it processing", "clean the runners up"
def _phrases(*pairs: tuple[str, str]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern, re.IGNORECASE), words) for pattern, words in pairs)


ACTIONS = _phrases(
    (rf"\b(?:stop|pause|halt|suspend)\s+{_W}?(?:processing|consuming|picking up|running|executing)\b", "disable"),
    (r"\b(?:clean(?:ing)?\s+(?:[\w.-]+\s+){0,3}up|clean-?up|get(?:ting)? rid of|tidy up)\b", "remove"),
    (r"(?<!\bto\s)(?<!\bonto\s)(?<!\bon\s)(?<!\bfrom\s)\b(?:another|an extra|one more|additional)\s+(?:[\w.-]+\s+){0,2}(?:vms?|nodes?|instances?|hosts?|replicas?|servers?|machines?|boxes)\b",
     "add instance"),
    (rf"\b(?:point|route|send|talk)\s+{_W}{{0,3}}(?:straight|directly)\b|\b(?:go|route|work) around\b", "bypass"),
    (rf"\b(?:turn|switch|flip)\s+{_W}?(?:back\s+)?on\b|\bre-?enable\b", "enable"),
    (rf"\b(?:roll|go|switch)\s+{_W}{{0,2}}back\b|\bundo\b|\bprevious (?:version|release)\b", "rollback"),
    (rf"\b(?:bounce|kick|cycle)\s+{_W}{{0,2}}(?:pods?|services?|process(?:es)?|daemons?|nodes?|it|them)\b", "restart"),
    (rf"\b(?:make|grow|give)\s+{_W}{{0,2}}(?:bigger|larger|more (?:space|room|disk|storage))\b", "resize expand"),
    (rf"\b(?:move|shift|transfer)\s+{_W}{{0,3}}(?:to|onto|off)\s+(?:another|a different|a new|other)\b", "migrate move"),
    (rf"\b(?:take|pull)\s+{_W}{{0,2}}out of (?:rotation|service|the pool|the load balancer)\b", "drain"),
    (rf"\b(?:promote|switch over to)\s+{_W}{{0,2}}(?:replica|standby|secondary)\b", "failover"),
)
# What an engineer knows a symptom points at, though the words differ: `kubectl top` and an HPA's
# <unknown> targets read the metrics API, which Kubernetes serves through API aggregation; alerts
# that stop reaching Slack or PagerDuty are a notification integration failing; "no space left on
# device" with free blocks left is inodes.
KNOWN = _phrases(
    (r"\bkubectl top\b|\bmetrics-server\b|\bmetrics\.k8s\.io\b|\bmetrics (?:are )?not (?:yet )?available\b",
     "metrics API aggregated API APIService"),
    (r"(?<![\w-])(?:slack|pagerduty|opsgenie|victorops|msteams|webhook)s?(?![\w-]).{0,60}\b(?:alerts?|pages?|notifications?|messages?)\b"
     r"|\b(?:alerts?|pages?|notifications?)\b.{0,60}(?<![\w-])(?:slack|pagerduty|opsgenie|victorops|msteams|webhooks?)(?![\w-])",
     "notification integration receiver"),
    (r"\bno space left on device\b|\bENOSPC\b", "filesystem space inodes files"),
    (r"\btoo many open files\b|\bEMFILE\b", "file descriptors limit"),
    (r"\bexit(?:ed)?(?: with)?(?: code| status)? 137\b|\bsignal(?::)? killed\b", "out of memory killed"),
    (r"\bexit(?:ed)?(?: with)?(?: code| status)? 139\b|\bsegfault\b|\bsegmentation fault\b", "crash"),
    (r"\bx509\b|\bcertificate (?:has )?expired\b|\bunknown authority\b", "certificate expiration TLS"),
    (r"\bcontext deadline exceeded\b|\bi/o timeout\b", "timeout latency slow"),
    (r"\bread-only file ?system\b|\bEROFS\b", "filesystem disk errors read-only"),
    (r"\bnf_conntrack\b.{0,40}\btable full\b|\bconntrack table\b", "conntrack entries"),
    (r"\b(?:DiskPressure|MemoryPressure|PIDPressure)\b", "node pressure eviction"),
    (r"\bFailedScheduling\b|\bInsufficient (?:cpu|memory)\b|\bunschedulable\b", "scheduling pending resources"),
    (r"\b(?:readiness|liveness|startup) probe failed\b", "probe not ready"),
    (r"\bseconds[_ ]behind[_ ](?:master|source)\b|\breplica(?:s)? (?:is |are )?behind\b", "replication lag"),
    (r"\btoo many (?:clients|connections)\b|\bconnection slots are reserved\b", "connections limit saturation"),
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:eth|eno|ens|enp\d+s|bond|wlan|ib)\d+$", re.IGNORECASE), "network interface"),
    (re.compile(r"^/dev/(?:sd[a-z]|nvme\d+n\d+|xvd[a-z]|vd[a-z])\w*$", re.IGNORECASE), "disk device"),
    (re.compile(r"^v\d+\.\d+(?:\.\d+)?$"), "version"),
)
_TOKEN = re.compile(r"[A-Za-z0-9/][A-Za-z0-9_/.-]*")


def expansion(word: str) -> str | None:
    """The runbook words for one word, or None."""
    low = word.lower().rstrip(".")
    if low in ABBREVIATIONS:
        return ABBREVIATIONS[low]
    if low in SYMPTOMS:
        return SYMPTOMS[low]
    return next((words for pattern, words in _PATTERNS if pattern.match(low)), None)


def expand(text: str) -> str:
    """The text with the runbook words written after each abbreviation (once each), and at the end the
    procedure's words for what it asks to have done and the words of what its symptoms point at."""
    added: set[str] = set()
    lowered = text.lower()

    def sub(m: re.Match[str]) -> str:
        words = expansion(m[0])
        if not words or words in added or words.lower() in lowered:
            return m[0]
        added.add(words)
        return f"{m[0]} ({words})"

    written = _TOKEN.sub(sub, text)
    wanted = [words for pattern, words in (*ACTIONS, *KNOWN) if pattern.search(text) and words not in lowered]
    return f"{written} ({' '.join(dict.fromkeys(wanted))})" if wanted else written
