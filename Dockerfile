# runbook-bot: `docker build -t runbook-bot .` then
#   docker run -p 3000:3000 -v runbook-data:/data -e SLACK_BOT_TOKEN=... runbook-bot
# With DATABASE_URL set, the external Postgres (with pgvector) is used instead of the
# embedded server, whose data otherwise lives on the /data volume.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    RUNBOOK_BOT_HOME=/data \
    PORT=3000

RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 runbook

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY retrieval ./retrieval
COPY guardrails ./guardrails
COPY prompts ./prompts
RUN pip install '.[pdf,docx]'

RUN mkdir -p /data && chown runbook:runbook /data
USER runbook
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"3000\")}/healthz', timeout=4)"

ENTRYPOINT ["runbook-bot"]
CMD ["serve"]
