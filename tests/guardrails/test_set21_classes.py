"""What blind set 21 (a retailer's hybrid estate) showed missing, in classes, with look-alikes."""

from __future__ import annotations

import pytest

from guardrails import check_command
from tests.guardrails.flagged import flagged as rules


@pytest.mark.parametrize("command, rule", [
    ("FLASHBACK DATABASE TO TIMESTAMP SYSDATE - 1;", "sql-restored-over"),
    ("ALTER TABLESPACE sapdata2 OFFLINE IMMEDIATE;", "sql-writes-blocked"),
    ("NOAUDIT ALL;", "sql-audit-off"),
    ("ALTER SERVER AUDIT [PCI_Audit] WITH (STATE = OFF);", "sql-audit-off"),
    ("BEGIN EXECUTE IMMEDIATE v_stmt; END;", "sql-dynamic"),
    ("EXEC sp_executesql @sql;", "sql-dynamic"),
    ("ALTER PROFILE DEFAULT LIMIT FAILED_LOGIN_ATTEMPTS UNLIMITED;", "sql-privilege-granted"),
    ("GRANT ROLE ACCOUNTADMIN TO ROLE PUBLIC;", "sql-privilege-granted"),
    ("ALTER TABLE dw.sales.orders SET DATA_RETENTION_TIME_IN_DAYS = 0;", "sql-backups-purged"),
    ('db2 "load from /dev/null of del replace into SALES.POS nonrecoverable"', "sql-restored-over"),
    ('hdbsql -U SYSKEY "DROP SCHEMA SAPHANADB CASCADE"', "sql-drop-database"),
    ("hdbsql -U SYSKEY -I /usr/sap/trans/tmp/fix.sql", "unseen-script"),
    ("dgmgrl / 'FAILOVER TO prd_b;'", "sap-stopped"),
    ("sapcontrol -nr 00 -function StopSystem ALL", "sap-stopped"),
    ("auditpol /set /category:* /success:disable /failure:disable", "windows-protection-off"),
    ("winrm set winrm/config/service '@{AllowUnencrypted=\"true\"}'", "security-switched-off"),
    ("Set-SmbServerConfiguration -EnableSMB1Protocol $true -Force", "security-switched-off"),
    ("manage-bde -off C:", "windows-protection-off"),
    ("Set-ADUser svc_sql -PasswordNeverExpires $true -TrustedForDelegation $true", "security-switched-off"),
    ("clear ns config full", "netscaler-changes"),
    ("disable lb vserver vs_checkout_https", "netscaler-changes"),
    ("configure replace flash:empty-config", "netscaler-changes"),
    ("set ssl vserver vs_checkout_https -tls1 ENABLED -ssl3 ENABLED", "security-switched-off"),
    ("set system parameter -strongpassword disabled", "security-switched-off"),
    ("set rulebase security rules Block-Known-Malicious disabled yes", "firewall-rule-disabled"),
    ("tmsh load sys ucs /var/local/ucs/bigip-old-2023.ucs no-license", "f5-restore-or-waf-removed"),
    ("purevol eradicate vol-sql-prd-data01", "storage-array-destroyed"),
    ("purehost disconnect esx-prd-07 --vol vol-vmfs-prd-02", "storage-array-host-cut"),
    ("volume snapshot restore -vserver svm_sap -volume vol_hana -snapshot hourly", "storage-array-destroyed"),
    ("vserver export-policy rule create -vserver s -policyname default -clientmatch 0.0.0.0/0 -superuser any",
     "nas-export-open"),
    ("Invoke-MgWipeDeviceManagementManagedDevice -ManagedDeviceId $d", "device-wiped-by-mdm"),
    ("az backup vault backup-properties set --name r --resource-group g --soft-delete-feature-state Disable",
     "security-switched-off"),
    ("kubectl patch clusterpolicy verify-image-signatures --type merge -p "
     "'{\"spec\":{\"validationFailureAction\":\"Audit\"}}'", "security-switched-off"),
    ("cat /dev/null > /var/log/audit/audit.log", "audit-log-emptied"),
    ("airflow connections get snowflake_prod -o json", "secret-printed"),
    ("az cosmosdb keys regenerate --name c --resource-group g --key-kind primary", "keys-regenerated"),
    ("terraform apply destroy.tfplan", "terraform-destroy-plan"),
])
def test_warns(command: str, rule: str) -> None:
    assert rule in rules(command), check_command(command)


@pytest.mark.parametrize("command", [
    "FLASHBACK TABLE orders TO BEFORE DROP;", "dgmgrl / 'show configuration'", "db2 list tables",
    "purevol list", "volume show -vserver svm_sap", "manage-bde -status C:", "auditpol /get /category:*",
    "cat /var/log/audit/audit.log", "az cosmosdb show --name c --resource-group g",
    "terraform apply app.tfplan",
])
def test_look_alikes_stay_quiet(command: str) -> None:
    assert rules(command) == [], check_command(command)
