"""What blind set 16 showed missing, in classes: states set out of service, secrets printed, verbs glued to
their nouns, SQL clients of other vendors, UNIX volume managers and HA clusters, IBM MQ, PaaS scaled to
zero; and what is housekeeping: acting on a target named as throwaway."""

from __future__ import annotations

import pytest

from tests.guardrails.flagged import judged


@pytest.mark.parametrize("command, rule", [
    ("az servicebus queue update -g rg -n orders --namespace-name sb --status Disabled", "state-switched-down"),
    ("az afd endpoint update -g rg --profile-name fd --endpoint-name www --enabled-state Disabled", "state-switched-down"),
    ("az webapp update -g rg -n portal --https-only false", "security-switched-off"),
    ("az network front-door waf-policy update -g rg -n waf --mode Detection", "security-switched-off"),
    ("echo 'plugins.security.disabled: true' | sudo tee -a /etc/opensearch/opensearch.yml", "security-switched-off"),
    ("echo 'allow_anonymous true' | sudo tee -a /etc/mosquitto/conf.d/default.conf", "security-switched-off"),
    ("kubectl label namespace billing istio-injection=disabled --overwrite", "security-switched-off"),
    ("kubectl get secret db-creds -n prod -o jsonpath='{.data.password}' | base64 -d", "secret-printed"),
    ("vault kv get -format=json secret/prod/db", "secret-printed"),
    ("az storage account keys list -g rg -n st", "secret-printed"),
    ("cat ~/.aws/credentials", "secret-printed"),
    ("kubectl -n scylla exec scylla-0 -- nodetool disablebinary", "verb-takes-down"),
    ("hastop -all", "ha-cluster-halted"),
    ("db2stop force", "verb-takes-down"),
    ('db2 "DROP DATABASE COREBNK"', "sql-drop-database"),
    ('db2 "LOAD FROM /dev/null OF DEL REPLACE INTO LEDGER.ACCOUNTS NONRECOVERABLE"', "sql-restored-over"),
    ("db2 -tvf /home/db2inst1/fix_ledger.sql", "unseen-script"),
    ('wrangler d1 execute acme-prod --remote --command "DROP TABLE users"', "sql-drop-table"),
    ("heroku pg:psql -a acme-prod < fix_orders.sql", "unseen-script"),
    ('mysql -h prod-mysql shop -e "SOURCE /tmp/hotfix.sql"', "unseen-script"),
    ('psql "$DB_URL" -c "ALTER TABLE public.profiles DISABLE ROW LEVEL SECURITY;"', "sql-privilege-granted"),
    ('psql "$DB_URL" -c "GRANT ALL ON ALL TABLES IN SCHEMA public TO anon;"', "sql-privilege-granted"),
    ("dltmqm QM_PAY01", "mq-destroyed"),
    ('echo "CLEAR QLOCAL(PAY.IN)" | runmqsc QM_PAY01', "mq-admin-change"),
    ("runmqsc QM_PAY01 < /tmp/mqsc_changes.in", "unseen-script"),
    ("rmlv -f oradatalv", "unix-volume-destroyed"),
    ("newfs /dev/rdsk/c1t1d0s6", "unix-volume-destroyed"),
    ("heroku ps:scale web=0 --app acme-prod", "paas-scaled-to-zero"),
    ("rclone sync ./dist r2:acme-user-uploads", "rclone-sync-deletes"),
    ("terraform state push -force old.tfstate", "terraform-state-forced"),
    ("argocd app sync streaming-prod --prune --force", "gitops-prune-forced"),
    ("kubectl get nodes -o name | xargs -n1 kubectl cordon", "kubectl-cordon-everything"),
])
def test_warns(command: str, rule: str) -> None:
    severity, rules = judged(command)
    assert severity in ("warn", "block") and rule in rules, (severity, rules)


@pytest.mark.parametrize("command", [
    "az servicebus queue update -g rg -n orders --namespace-name sb --status Active",
    "kubectl get secrets -n prod", "kubectl describe secret x",
    "kubectl get secret db-creds -o jsonpath='{.data.user}' | base64 -d",
    "kubectl get secret tls -o jsonpath='{.data.tls\\.crt}' | base64 -d | openssl x509 -noout -enddate",
    "kubectl get secret tls-cert -o yaml > old.secret", "vault kv metadata get secret/prod/db",
    "vault kv get -field=username secret/prod/db", "doctl compute droplet list", "db2 list tables",
    "wrangler d1 execute acme-prod --local --command \"DROP TABLE users\"", "heroku ps:scale web=2 --app acme",
    "rclone sync ./dist r2:x --dry-run", "hagrp -switch oracle_sg -to node2", "lslv oradatalv",
    'echo "DISPLAY QLOCAL(*) CURDEPTH" | runmqsc QM1', "runmqsc -v QM1 < /tmp/changes.in", "ksh -n /tmp/x.ksh",
    "shutdown -k now 'drill'", "lvreduce -r -L 2G /dev/vg/data --test", "npx --yes prettier@3.2.5 --check .",
    "kubectl apply -f https://github.com/cert-manager/cert-manager/releases/download/v1.14.4/cert-manager.yaml",
    "kubectl cordon worker-3", "argocd app sync streaming-prod",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert judged(command)[0] in ("none", "info"), judged(command)


@pytest.mark.parametrize("command, severity", [
    # a target named as throwaway (a pull request's preview, CI, scratch, canary): housekeeping, at info
    ("kubectl delete namespace preview-pr-4821", "info"),
    ("az group delete --name rg-pr-4412-preview --yes --no-wait", "info"),
    ("aws s3 rm s3://acme-ci-artifacts/tmp/build-8812/ --recursive", "info"),
    ("kubectl scale deploy/recs-api-canary --replicas=0 -n streaming", "info"),
    # ... not when production is named, when the word is in a local path or a glob, or for SQL's own tables
    ("kubectl delete namespace preview-prod", "warn"),
    ("rsync -a --delete /tmp/empty/ /srv/data/", "warn"),
    ("find /srv -name 'tmp.*' -exec rm -rf {} +", "warn"),
    ("DROP TABLE tmp_x, orders;", "warn"),
    ("kubectl delete namespace payments", "warn"),
])
def test_throwaway_targets_are_housekeeping(command: str, severity: str) -> None:
    assert judged(command)[0] == severity, judged(command)
