"""The runbook-bot command line (main.py) and its command groups."""
