"""extract_commands: which parts of a Markdown or plain text are commands."""

from __future__ import annotations

from guardrails import extract_commands

RUNBOOK = """\
# Disk full

Check with `df -h` and look at `/var/lib/docker` (a path, not a command).

1. Find big directories:

   ```bash
   # biggest first
   sudo du -xh --max-depth=2 / 2>/dev/null \\
     | sort -rh | head -25
   kubectl get pods -n kube-system
   ```

2. Query the database:

   ```sql
   SELECT count(*) FROM jobs;
   DELETE FROM jobs WHERE done;
   ```

```yaml
command: ["rm", "-rf", "/"]
```

```promql
rate(http_requests_total[5m])
```

$ journalctl -u kubelet --since today
"""


def test_fences_inline_and_prompt_lines() -> None:
    assert extract_commands(RUNBOOK) == [
        "sudo du -xh --max-depth=2 / 2>/dev/null \\\n  | sort -rh | head -25",
        "kubectl get pods -n kube-system",
        "SELECT count(*) FROM jobs;",
        "DELETE FROM jobs WHERE done;",
        "journalctl -u kubelet --since today",
        "df -h",
    ]


def test_heredoc_stays_with_its_command() -> None:
    text = "```bash\npsql app <<'SQL'\nDELETE FROM jobs;\nSQL\necho done\n```"
    assert extract_commands(text) == ["psql app <<'SQL'\nDELETE FROM jobs;\nSQL", "echo done"]


def test_heredoc_kept_when_bashlex_fails() -> None:
    text = "```bash\n[[ -f x ]] && cat <<EOF | psql\nDROP TABLE t;\nEOF\necho ok\n```"
    assert extract_commands(text) == ["[[ -f x ]] && cat <<EOF | psql\nDROP TABLE t;\nEOF", "echo ok"]


def test_multiline_loop_is_one_command() -> None:
    text = "```sh\nfor d in a b; do\n  rm -rf \"$d\"\ndone\n```"
    assert extract_commands(text) == ['for d in a b; do\n  rm -rf "$d"\ndone']


def test_console_blocks_keep_prompts_and_drop_output() -> None:
    text = ("```console\n$ kubectl get ns\nNAME STATUS AGE\ndefault Active 3d\n"
            "# systemctl restart kubelet\nuser@host:~$ df -h \\\n> /var\n```")
    assert extract_commands(text) == ["kubectl get ns", "systemctl restart kubelet", "df -h \\\n/var"]


def test_directory_prompt_only_before_known_programs() -> None:
    text = "```\nchef-repo $ knife ssh 'roles:db' 'uptime'\nTotal $ 42\n```"
    assert extract_commands(text) == ["knife ssh 'roles:db' 'uptime'"]


def test_unlabelled_fence_is_shell_and_tildes_work() -> None:
    assert extract_commands("~~~\nreboot\n~~~") == ["reboot"]


def test_inline_code_needs_a_known_program_and_an_argument() -> None:
    text = "Run `kubectl get pods`, not `kubectl`; `NodeNotReady` is an alert and `rm -rf` a warning."
    assert extract_commands(text) == ["kubectl get pods", "rm -rf"]


def test_inline_sql_needs_an_upper_case_keyword() -> None:
    assert extract_commands("Run `DROP TABLE users` but not `drop the table`.") == ["DROP TABLE users"]


def test_plain_text_lines_that_start_with_a_program() -> None:
    assert extract_commands("rm -rf /") == ["rm -rf /"]
    assert extract_commands("reboot") == ["reboot"]
    assert extract_commands("please do not rm -rf / the box") == []
    assert extract_commands("Disk is full. Clean up\nsudo docker system prune -a\n") == ["sudo docker system prune -a"]


def test_no_commands() -> None:
    assert extract_commands("") == []
    assert extract_commands("Nothing to run here; see the dashboard.") == []
