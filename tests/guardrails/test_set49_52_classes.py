"""What blind sets 49 (Heroku/RDS MySQL, a council's Windows estate, a PBS/BeeGFS cluster, Linkerd/CockroachDB,
broadcast playout storage, ClickHouse/Kafka/Druid, a campus network, mainframe batch and MQ, GitLab, a Debian
VPS fleet), 50 (Moodle, Hyper-V clusters, Flink/Pulsar, the HashiCorp stack, bare metal, DynamoDB/Cognito,
MongoDB, core routers, WordPress hosting, Crossplane/Karpenter) and 52 (Azure Postgres/AKS, Exchange and
Microsoft 365, time series, research storage, IoT fleets, AIX, Cassandra/Elasticsearch, AWS edge, Nomad/Podman,
small-office firewalls) showed missing, as classes, each with look-alikes that must stay quiet. Every class also
recurs in earlier sets or in another estate's dialect."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


LISTED_KINDS_WARN = [
    # `kubectl get KIND -o name | ... | xargs kubectl delete`: the names carry their kind
    ("kubectl get ns -o name | grep -v kube- | xargs kubectl delete", "kubectl-delete-namespace"),
    ("kubectl get ns -o name | grep -v -E 'kube-|default' | xargs -r kubectl delete", "kubectl-delete-namespace"),
    ("kubectl get pv -o name | grep cockroach | xargs kubectl delete", "kubectl-delete-storage"),
    ("oc get namespaces -o name | grep -v openshift | xargs oc delete", "kubectl-delete-namespace"),
]

LISTED_KINDS_LOOK_ALIKES_PASS = [
    "kubectl get pods -o name | grep Evicted | xargs kubectl delete",  # pods a controller recreates
    "kubectl get pods -n prod --field-selector=status.phase=Failed -o name | xargs -r kubectl delete -n prod",
    "kubectl get ns -o name | grep -v kube- | xargs -n1 kubectl describe",
]

REMOTE_SHELL_QUOTING_WARN = [
    # a carrier that hands its words to a remote shell: the quoted argument is one argument to the writer
    ("heroku run rails runner 'Review.where(status: \"spam\").delete_all' -a reviews-prod", "rails-console-destroys"),
    # Ci:: is GitLab's namespace, not a throwaway CI target
    ("sudo gitlab-rails runner 'Ci::JobArtifact.where(\"created_at < ?\", 30.days.ago).find_each(&:destroy!)'",
     "rails-console-destroys"),
]

REMOTE_SHELL_LOOK_ALIKES_PASS = [
    "heroku run rails runner 'puts Review.where(status: \"spam\").count' -a reviews-prod",
    "sudo gitlab-rails runner \"puts Ci::Runner.instance_type.count\"",
]

XML_API_WARN = [
    # PAN-OS's XML API writes through a GET (type=config&action=set|edit); `<x>` bodies
    ("curl -sk \"https://fw1/api/?type=config&action=set&xpath=/config/mgt-config/users/entry[@name='tmp']"
     "&element=<permissions><role-based><superuser>yes</superuser></role-based></permissions>&key=$K\"",
     "verb-weakens-security"),
    ("curl -sk \"https://fw1/api/?type=config&action=set&xpath=/config/devices/entry/vsys/entry/rulebase/security"
     "/rules/entry[@name='deny-in']&element=<disabled>yes</disabled>&key=$K\"", "verb-weakens-security"),
    ("curl -k \"https://fw2/api/?type=config&action=edit&xpath=/config/devices/entry/vsys/entry/rulebase/security"
     "/rules/entry[@name='ot-to-it']/log-end&element=<log-end>no</log-end>&key=$K\"", "verb-weakens-security"),
    # a body that makes someone a superuser, in NetBox's and Okta's words
    ("curl -X PATCH -H \"Authorization: Token $T\" https://netbox/api/users/users/12/ -d '{\"is_superuser\": true}'",
     "verb-weakens-security"),
    ("curl -s -X POST -H \"Authorization: SSWS $T\" -d '{\"type\":\"SUPER_ADMIN\"}' "
     "https://acme.okta.com/api/v1/users/00u1/roles", "verb-weakens-security"),
]

XML_API_LOOK_ALIKES_PASS = [
    "curl -k \"https://fw1/api/?type=config&action=get&xpath=/config/devices/entry/vsys/entry/rulebase/security&key=$K\"",
    "curl -k \"https://fw1/api/?type=config&action=show&xpath=/config/mgt-config/users&key=$K\"",
    "curl -s -H \"Authorization: Token $T\" https://netbox/api/users/users/?is_superuser=true",
    "curl -X PATCH -H \"Authorization: Token $T\" https://netbox/api/users/users/12/ -d '{\"is_superuser\": false}'",
]

MAINFRAME_LINES_WARN = [
    # TSO/RACF and operator console commands typed bare, as a mainframe runbook lists them
    ("PERMIT 'PROD.CLAIMS.**' CLASS(DATASET) ID(*) ACCESS(ALTER)", "zos-racf-opened"),
    ("ALTDSD 'PROD.**' UACC(ALTER)", "zos-racf-opened"),
    ("SETROPTS NOPROTECTALL", "zos-racf-opened"),
    ("HBDELETE 'PROD.CLAIMS.MASTER' ALL", "zos-backups-deleted"),
    ("V 0A80,OFFLINE", "zos-task-stopped"),
    ("Z EOD", "zos-system-halted"),
    ("$PJES2,ABEND", "zos-task-stopped"),
    ("-DB2P STOP DATABASE(CLAIMSDB)", "zos-task-stopped"),
    ("F CICSPROD,CEMT SET FILE(POLMAST) CLOSED DISABLED", "zos-cics-changed"),
    # IBM MQ commands typed without runmqsc around them
    ("CLEAR QLOCAL(SYSTEM.DEAD.LETTER.QUEUE)", "mq-admin-change"),
    ("ALTER QMGR CONNAUTH(' ')", "mq-admin-change"),
]

MAINFRAME_LOOK_ALIKES_PASS = [
    "$DJ1234", "$D I", "D A,L", "LISTUSER JSMITH", "RLIST FACILITY BPX.SUPERUSER", "-DB2P DISPLAY DATABASE(CLAIMSDB)",
    "ALTDSD 'PROD.**' UACC(NONE)", "HLIST DSNAME(PROD.X) BCDS", "DISPLAY QLOCAL(CLAIMS.IN) CURDEPTH",
    "DIS CHSTATUS(*)", "C",
]


@pytest.mark.parametrize("command, rule", [
    *LISTED_KINDS_WARN, *REMOTE_SHELL_QUOTING_WARN, *XML_API_WARN, *MAINFRAME_LINES_WARN,
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    *LISTED_KINDS_LOOK_ALIKES_PASS, *REMOTE_SHELL_LOOK_ALIKES_PASS, *XML_API_LOOK_ALIKES_PASS,
    *MAINFRAME_LOOK_ALIKES_PASS,
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
