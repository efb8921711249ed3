"""Commands whose action is not on the line: the verb a tool's rules decide on is a variable, code or a console
command is handed over in a variable named for it, or a console is fed a file. What they do cannot be told, so
they warn; the same tools reading, printing or linting pass."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("kubectl $ACTION statefulset/ledger -n payments", "opaque-command"),
    ('systemctl "$1" postgresql', "opaque-command"),
    ("gcloud $(cat /tmp/queued_step)", "opaque-command"),
    ("az `cat next.txt`", "opaque-command"),
    ("vault $OP secret/payments/stripe", "opaque-command"),
    ("rabbitmqctl $(head -1 todo.txt)", "opaque-command"),  # a console of verbs: *ctl, *adm, *cli
    ('fs_cli -x "$FS_CMD"', "opaque-command"),
    ("drush php:eval \"$PHP_CODE\"", "opaque-command"),
    ('mongosh --quiet --eval "$JS_SNIPPET" mongodb://db1/app', "opaque-command"),
    ("curl -X POST https://ci.example.com/scriptText --data-urlencode \"script=$GROOVY\"", "opaque-command"),
    ("runuser -l appsvc -c \"$1\"", "opaque-command"),
    ('printf "%s\\n" "$MQSC_CMD" | runmqsc QM1', "opaque-command"),
    ("sudo -u www-data wp shell < /srv/ops/fix-users.php", "unseen-script"),
    ("mgmt-console < /tmp/night.txt", "unseen-script"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "kubectl $KFLAGS get pods -n payments",  # the variable is followed by a verb that only reads
    "kubectl -n $NS describe deploy/api",
    "aws --region $REGION ec2 describe-instances",
    'curl -sS "$STATUS_URL"',  # a URL in a variable: the method says what the call does
    "kill -HUP $(cat /run/nginx.pid)",
    'ping -c "$COUNT" db1',
    'cat "$FIX_SCRIPT"',
    'shellcheck "$DEPLOY_SCRIPT"',
    'echo "$ROLLBACK_CMD"',
    "Write-Output $RestartCmd",
    "az monitor metrics list --resource $SQL_ID",  # SQL_ID names a resource, not SQL
    "kea-shell --service dhcp4 config-test < /tmp/kea.json",  # a check of the file
    "Set-MpPreference -DisableRealtimeMonitoring $false",
])
def test_look_alikes_pass(command: str) -> None:
    assert not rules(command), check_command(command)
