# The boulanger server: engine, race server and web client in one image.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY server ./server
COPY client ./client
RUN pip install --no-cache-dir . \
    && useradd --system --no-create-home boulanger \
    && mkdir /data && chown boulanger /data
ENV BOULANGER_CLIENT_DIR=/app/client
# Without BOULANGER_BROKER_URL, one process keeps everything in /data/boulanger.db.
ENV BOULANGER_DATA_DIR=/data
VOLUME /data
USER boulanger
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz').status != 200)"
# X-Forwarded-For is trusted only from the proxy's address, which the
# deployment names in BOULANGER_FORWARDED_ALLOW_IPS (docker-compose.yml); on
# its own the container trusts no one but loopback.
CMD ["boulanger", "serve", "--host", "0.0.0.0", "--port", "8000"]
