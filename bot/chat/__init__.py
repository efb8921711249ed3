"""What the chat adapters share, whatever the platform: alerts read from a thread, the placeholder
reply, background tasks, rate limits. No chat SDK is imported here."""
