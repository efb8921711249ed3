"""Retrieval: ingestion, chunking, embeddings, SQL, hybrid search. Knows nothing of Slack or LLMs."""
