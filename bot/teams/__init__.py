"""The Microsoft Teams adapter: activities, Adaptive Cards, auth, replies, feedback."""
