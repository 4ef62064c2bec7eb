# klondike-race server image. One image for every node; docker-compose.yml runs two
# of them behind nginx, all on one Redis (the CMD below). Run without --redis (and
# without KLONDIKE_REDIS_URL), a container keeps rooms and sessions in the embedded
# SQLite store in /data (KLONDIKE_DATA_DIR), a volume: mount a named one to keep them
# when the container is replaced, e.g.
#   docker run -v klondike-data:/data -p 8765:8765 IMAGE klondike-race serve --host 0.0.0.0
# Without a mount, Docker gives each new container an empty anonymous volume.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    KLONDIKE_DATA_DIR=/data

# Install from a copy of the source (see .dockerignore), then drop it: the image holds
# only the installed package, the same way a user would get it from a wheel.
COPY . /src
RUN pip install /src \
    && rm -rf /src \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin klondike \
    && mkdir /data \
    && chown klondike /data

VOLUME /data
USER klondike
WORKDIR /tmp
EXPOSE 8765

# /healthz answers 200 while the node serves; compose and the load balancer rely on it.
HEALTHCHECK --interval=5s --timeout=2s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2)"]

CMD ["klondike-race", "serve", "--host", "0.0.0.0", "--port", "8765", "--redis", "redis://redis:6379/0"]
