"""The Slack adapter: the only importer of slack_bolt (adapter.py), Block Kit rendering, replies, feedback."""
