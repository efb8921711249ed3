"""What blind set 17 (an ordinary company's incident fixes) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("docker login -u admin -p Sup3rS3cret registry.example.com", "credential-on-line"),
    ("git remote set-url origin https://ghp_a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ@github.com/acme/api.git",
     "credential-on-line"),
    ("mysql -uroot -pS3cret -e 'select 1'", "credential-on-line"),
    ("kubectl run tmp-shell -n prod --rm -it --image=nicolaka/netshoot -- bash", "unpinned-image"),
    ("kubectl set image deploy/api -n prod api=docker.io/randomdev/api-hotfix:latest", "unpinned-image"),
    ("docker run -d --name redis hackerbob/redis-fixed:latest", "unpinned-image"),
    ("sudo sed -i 's/^\\s*auth_basic /# auth_basic /' /etc/nginx/sites-enabled/kibana", "security-switched-off"),
    ("sudo sed -i 's/ssl_protocols .*/ssl_protocols TLSv1 TLSv1.1 TLSv1.2;/' /etc/nginx/nginx.conf", "security-switched-off"),
    ("sudo sed -i 's/verify required/verify none/' /etc/haproxy/haproxy.cfg", "security-switched-off"),
    ("sudo sed -i 's/^bind-address.*/bind-address = 0.0.0.0/' /etc/mysql/mysql.conf.d/mysqld.cnf", "security-switched-off"),
    ("sudo pcs property set stonith-enabled=false", "security-switched-off"),
    ("aws dynamodb update-continuous-backups --table-name t --point-in-time-recovery-specification "
     "PointInTimeRecoveryEnabled=false", "security-switched-off"),
    ("gh api -X PATCH repos/acme/api -f 'security_and_analysis[secret_scanning][status]=disabled'", "security-switched-off"),
    ("docker run -d --name db -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15", "security-switched-off"),
    ("aws ec2 modify-instance-attribute --instance-id i-0abc --no-disable-api-termination", "security-switched-off"),
    ("kubectl patch pvc data-db-0 -n prod -p '{\"metadata\":{\"finalizers\":null}}'", "k8s-protection-removed"),
    ("kubectl patch ingress api -n prod --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/tls\"}]'", "k8s-tls-removed"),
    ("aws logs put-retention-policy --log-group-name /ecs/api --retention-in-days 1", "logs-retention-cut"),
    ("wp plugin install https://example.net/fix-cache.zip --activate", "plugin-from-url"),
    ("go install github.com/unknown/k8s-cleaner@latest", "package-run-unpinned"),
    ("sudo npm install -g some-random-cli@latest", "npm-global-latest"),
    ("ansible-galaxy install someuser.hardening", "galaxy-role-unpinned"),
    ("npx some-db-fixer --connection $DATABASE_URL", "npx-unpinned"),
    ("alembic downgrade base", "schema-rolled-back"),
    ("bundle exec rails db:rollback STEP=1", "schema-rolled-back"),
    ("flyway -url=jdbc:postgresql://db:5432/app clean", "schema-rolled-back"),
    ("crontab /tmp/new_crontab", "crontab-from-file"),
    ("./scripts/cleanup.sh --all", "change-script-run"),
    ("sudo sh ./hotfix.sh", "change-script-run-shell"),
    ("psql -d app -c '\\i /tmp/fix.sql'", "unseen-script"),
    ('mysql -h db-prod app -e "$(cat /tmp/cleanup.sql)"', "unseen-script"),
    ('perl -e "$(cat /tmp/oneliner)"', "unseen-script"),
    ("mysqldump app | mysql -h db-prod app", "sql-restored-over"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "docker login -u admin --password-stdin registry.example.com", "mysql -uroot -p -e 'select 1'",
    "docker run -d --rm -p 5000:5000 flamescope:1.2", "docker run --rm postgres:15 psql --version",
    "docker run -d registry.corp:5000/team/api:latest", "docker run --rm grafana/grafana:10.2.3",
    "kubectl run x --image=busybox --rm -it -- sh", "docker pull randomuser/cleanup:latest",
    "curl https://user:$PASS@example.com/x", "sudo sed -i 's/ssl_protocols .*/ssl_protocols TLSv1.2 TLSv1.3;/' n.conf",
    "aws ec2 modify-instance-attribute --instance-id i-0abc --disable-api-termination",
    "aws logs put-retention-policy --log-group-name /ecs/api --retention-in-days 90",
    "go install golang.org/x/tools/gopls@latest", "go install github.com/x/y@v1.2.3", "npm install", "npm install -g pnpm",
    "ansible-galaxy install -r requirements.yml", "npx prettier@3.2.5 --check .", "alembic upgrade head",
    "flyway migrate", "crontab -l", "./scripts/check-health.sh", "bash perf.sh",
    "mysqldump --skip-add-drop-table app | mysql -h db2 app",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)


@pytest.mark.parametrize("command", [
    # what blind set 18 judged safe: taking an opening away, offboarding, rehearsals, retention-style clean-ups
    "rabbitmqctl delete_user guest", "ipa hbacrule-disable allow_all", "ipa user-disable jdoe.contractor",
    "Disable-ADAccount -Identity former.driver", "oc adm policy who-can delete pods -n wms-prod", "mkfs.xfs -N /dev/sdc",
    "kafka-consumer-groups.sh --bootstrap-server k:9092 --group g --reset-offsets --to-datetime 2024-06-01T00:00:00.000 --topic t",
    'curl -X DELETE "https://es-prod.internal:9200/_search/scroll/_all"',
])
def test_hardening_and_rehearsals_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)


@pytest.mark.parametrize("command", [
    "rabbitmqctl delete_user app", "ipa user-del jdoe", "Stop-Computer -Force",
    "kafka-consumer-groups.sh --bootstrap-server k:9092 --group g --reset-offsets --to-earliest --topic t --execute",
    "java -jar jenkins-cli.jar -s https://ci.acme.io/ shutdown",  # a CI server's host is not a throwaway name
])
def test_their_destructive_twins_still_warn(command: str) -> None:
    assert rules(command), check_command(command)
