"""What blind set 25 (a Solaris tax agency, a campus network, factory OT, a crypto exchange, a news CMS, a mobile
backend, shared hosting, a storage team, observability and a HashiCorp shop) showed missing, in classes, with
look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("chmod 777 /home/jdoe/public_html/wp-content/uploads", "chmod-world-writable"),
    ("nomad job stop payments-worker-batch", "nomad-job-stop"),
    ("terraform -chdir=envs/prod state rm module.rds.aws_db_instance.main", "terraform-state-rm"),
    ("terraform init -upgrade", "terraform-init-upgrade"),
    ("packer init -upgrade .", "terraform-init-upgrade"),
    ("aws s3 rm s3://corp-terraform-state/prod/terraform.tfstate", "terraform-state-file-deleted"),
    ("vault operator rekey -init -key-shares=1 -key-threshold=1", "vault-rekey-single-share"),
    ("memcached -d -u memcache -l 0.0.0.0 -U 11211 -m 4096", "datastore-bound-to-all"),
    ("postconf -e 'mynetworks = 0.0.0.0/0'", "security-switched-off"),
    ("vault write sys/config/cors enabled=true allowed_origins='*'", "security-switched-off"),
    ("vault write pki_int/config/crl disable=true", "security-switched-off"),
    ("redis-cli -h r CONFIG SET appendonly no", "security-switched-off"),
    ("wp config set DISALLOW_FILE_EDIT false --raw", "security-switched-off"),
    ("sed -i 's/^PermitRootLogin no/PermitRootLogin yes/' /etc/ssh/sshd_config", "security-switched-off"),
    ("ssh -o PasswordAuthentication=yes host", "security-switched-off"),
    ("echo \"GRANT SELECT ANY TABLE TO audit_ro;\" | sqlplus -s / as sysdba", "sql-privilege-granted"),
    ("psql \"$U\" -c \"DROP POLICY owners_only ON public.profiles;\"", "sql-privilege-granted"),
    ("rm -rf ~/.bitcoin/wallets/hot", "rm-rf-path"),
    ("wp user create t t@x.io --role=administrator --user_pass=admin123", "credential-on-line"),
    # verbs glued to short nouns; mail queues; CMS databases; rsync --delete into any directory
    ("qdelete client -c sqlprod01 -y", "verb-destroys"),
    ("cfgclear; cfgsave", "verb-destroys"),
    ("switchdisable", "verb-takes-down"),
    ("postsuper -d ALL", "mail-queue-purged"),
    ("drush sql:query \"TRUNCATE node_field_data\"", "sql-truncate"),
    ("drush sql:sync @staging @prod -y", "cms-database-sync"),
    ("wp db query \"DELETE FROM wp_posts WHERE post_type='revision'\"", "sql-delete-rows"),
    ("wp search-replace 'https://a.example' 'https://b.example' --all-tables", "cms-database-sync"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "terraform init", "terraform -chdir=envs/prod state pull > prod.tfstate.bak", "memcached -d -l 127.0.0.1",
    "rm -rf ~/.cache/pip", "nomad alloc stop 8f3c2a1b", "chmod 777 /tmp/build-42",
    # hardening SSH is not weakening it
    "postsuper -d 3F2A81C0A2", "postsuper -r ALL", "drush sql:sync @prod @self -y", "wp db export /tmp/x.sql",
    "wp db query \"SELECT 1\"", "drush sql:query \"TRUNCATE cache_render\"", "rsync -a --delete ./build/ /tmp/out/", "taskkill /?",
    "unclear x",
    "ssh -o PasswordAuthentication=no host",
    "sed -i 's/^PasswordAuthentication yes/PasswordAuthentication no/' /etc/ssh/sshd_config",
    "sudo sed -i 's/^PermitRootLogin yes/PermitRootLogin no/' /etc/ssh/sshd_config && sudo sshd -t",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
