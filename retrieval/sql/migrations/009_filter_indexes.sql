-- Metadata pre-filters (retrieval/candidates.filter_clause) compare lower(metadata->>'service') and
-- lower(metadata->>'environment'). With these a selective filter finds its documents through an
-- index instead of reading every document's front matter (at 1M chunks, ~200k documents).
CREATE INDEX documents_service_idx ON documents ((lower(metadata->>'service')));
CREATE INDEX documents_environment_idx ON documents ((lower(metadata->>'environment')));
